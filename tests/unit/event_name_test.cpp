// Event names derived from attrs when a perf.data carries none, as perf 6.1's evsel__name()
// gives them (perf script prints these; the shared test data checks them against perf too).
#include "collector/records/event_name.h"

#include <gtest/gtest.h>

#include "tests/unit/perf_record_builder.h"

namespace profcollect {
namespace {

using namespace perfbuild;

std::string name_of(uint32_t type, uint64_t config, uint64_t flags, uint64_t bp_addr = 0) {
  Attr a;
  a.type = type;
  a.config = config;
  a.flags = flags;
  std::vector<uint8_t> bytes = a.bytes();
  if (type == 5) {         // breakpoint: bp_type at 52, bp_addr at 56
    uint32_t bp_type = 3;  // r|w
    std::memcpy(bytes.data() + 52, &bp_type, 4);
    std::memcpy(bytes.data() + 56, &bp_addr, 8);
  }
  return perf_event_name(parse_perf_attr(bytes));
}

TEST(EventNameTest, HardwareAndSoftwareWithModifiers) {
  EXPECT_EQ(name_of(0, 0, kFlagExcludeGuest), "cycles");
  EXPECT_EQ(name_of(0, 0, 0), "cycles:HG");  // guest counted, unlike perf's default
  EXPECT_EQ(name_of(0, 0, kFlagExcludeGuest | precise_ip(2)), "cycles:ppH");
  EXPECT_EQ(name_of(0, 0, precise_ip(3)), "cycles:ppp");
  EXPECT_EQ(name_of(0, 1, kFlagExcludeKernel | kFlagExcludeHv | kFlagExcludeGuest),
            "instructions:uH");
  EXPECT_EQ(name_of(0, 1, kFlagExcludeKernel | kFlagExcludeHv), "instructions:u");
  EXPECT_EQ(name_of(0, 5, kFlagExcludeUser | kFlagExcludeGuest), "branch-misses:khH");
  EXPECT_EQ(name_of(0, 99, kFlagExcludeGuest), "unknown-hardware");
  EXPECT_EQ(name_of(1, 0, kFlagExcludeGuest), "cpu-clock");
  EXPECT_EQ(name_of(1, 9, kFlagExcludeKernel | kFlagExcludeHv | kFlagExcludeGuest), "dummy:uH");
}

TEST(EventNameTest, CacheRawBreakpointAndUnknown) {
  EXPECT_EQ(name_of(3, 0 | (0 << 8) | (1 << 16), kFlagExcludeGuest), "L1-dcache-load-misses");
  EXPECT_EQ(name_of(3, 2 | (1 << 8), kFlagExcludeGuest), "LLC-stores");
  EXPECT_EQ(name_of(3, 4 | (1 << 8), kFlagExcludeGuest), "invalid-cache");  // iTLB has no stores
  EXPECT_EQ(name_of(4, 0xc4, kFlagExcludeGuest), "raw 0xc4");
  EXPECT_EQ(name_of(5, 0, kFlagExcludeGuest, 0x1000), "mem:0x1000:rw");
  EXPECT_EQ(name_of(2, 0, 0), "unknown tracepoint");
  EXPECT_EQ(name_of(8, 0, 0), "unknown attr type: 8");
}

}  // namespace
}  // namespace profcollect
