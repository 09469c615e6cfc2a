// Feature sections that claim more than they hold: the section is dropped whole, and nothing is
// read past its end (an event-desc entry naming ids the section does not have once made the
// reader load the first id from beyond it).
#include <gtest/gtest.h>

#include <vector>

#include "collector/records/perf_abi.h"
#include "collector/input/perf_data_features.h"
#include "tests/unit/perf_record_builder.h"

namespace profcollect {
namespace {

using namespace perfbuild;

TEST(PerfDataFeaturesDamage, EventDescWithIdsPastTheSectionIsDropped) {
  Attr a;
  PerfSessionState state;
  state.add_attr(parse_perf_attr(a.bytes()), {});
  const std::string derived = state.info().attrs[0].name;
  Bytes desc;
  desc.u32(1).u32(0);                // one event, attrs of 0 bytes
  desc.u32(1).perf_string("named");  // one id ... which the section ends before
  // Exactly as long as written: a read past it is a read past the allocation.
  const std::vector<uint8_t> section = desc.data;
  apply_feature(perf_abi::kFeatEventDesc, section, state);
  EXPECT_EQ(state.info().attrs[0].name, derived);
}

TEST(PerfDataFeaturesDamage, StringsLongerThanTheSectionAreDropped) {
  PerfSessionState state;
  Bytes host;
  host.u32(1000).raw("host", 4);
  apply_feature(perf_abi::kFeatHostname, host.data, state);
  EXPECT_TRUE(state.info().hostname.empty());
  Bytes cmdline;
  cmdline.u32(0xffffffff).perf_string("perf");  // 4 billion arguments, one present
  apply_feature(perf_abi::kFeatCmdline, cmdline.data, state);
  EXPECT_TRUE(state.info().cmdline.empty());
}

}  // namespace
}  // namespace profcollect
