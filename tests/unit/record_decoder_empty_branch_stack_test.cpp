// RecordDecoder on a sample whose RAW payload leaves the branch stack off 8-byte alignment and
// whose stack is empty: an empty span, no copy (the copy of zero entries from such a position
// was a memcpy with a null destination, undefined behaviour).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collector/records/perf_session_state.h"
#include "collector/records/record_decoder.h"
#include "tests/unit/perf_record_builder.h"

namespace profcollect {
namespace {

using namespace perfbuild;

TEST(RecordDecoderEmptyBranchStack, UnalignedAfterRawIsAnEmptySpan) {
  Attr a;
  a.sample_type = IP | TID | TIME | RAW | BRANCH_STACK;
  PerfSessionState state;
  state.add_attr(parse_perf_attr(a.bytes()), {});
  RecordDecoder decoder(state);

  // ip, pid/tid, time, raw {size 1, one byte}, nr = 0: the count sits 5 bytes off alignment.
  Bytes body;
  body.u64(0x401000).u32(7).u32(7).u64(500).u32(1).u8(0xaa).u64(0).zeros(3);
  const std::vector<uint8_t> rec = record(9, 2, body);
  RawRecord raw;
  raw.type = 9;
  raw.misc = 2;
  raw.bytes = {rec.data(), rec.size()};
  Record out;
  decoder.decode(raw, out);
  const auto& s = std::get<SampleRecord>(out);
  EXPECT_TRUE(s.has_branch_stack);
  EXPECT_TRUE(s.branches.empty());
  EXPECT_EQ(s.ip, 0x401000u);
  EXPECT_EQ(s.time, 500u);
}

}  // namespace
}  // namespace profcollect
