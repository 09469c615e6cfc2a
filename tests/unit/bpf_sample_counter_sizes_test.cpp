// The sample counter's map sizes (bpf/sample_counter.h): room for every sample of a drain
// interval to be a distinct key, with head room, within caps; and a memory figure that grows
// with the sizes.
#include <gtest/gtest.h>

#include <bit>

#include "bpf/sample_counter.h"

namespace profcollect {
namespace {

using namespace std::chrono_literals;

TEST(BpfSampleCounterSizes, HoldEveryDistinctSampleOfAnIntervalWithHeadRoom) {
  // 4000 Hz on 8 CPUs drained every 250 ms: 8000 samples an interval.
  const SampleCounterSizes s = size_sample_counter(4000, 8, 250ms);
  EXPECT_GE(s.ip_entries, 8000u * 5 / 4);
  EXPECT_TRUE(std::has_single_bit(s.ip_entries));
  EXPECT_GT(s.targets, 0u);
}

TEST(BpfSampleCounterSizes, StayWithinTheirFloorAndCap) {
  const SampleCounterSizes tiny = size_sample_counter(1, 1, 1ms);
  EXPECT_GE(tiny.ip_entries, 1024u);
  const SampleCounterSizes huge = size_sample_counter(1e6, 1024, 60000ms);
  EXPECT_EQ(huge.ip_entries, 1u << 22);
}

TEST(BpfSampleCounterSizes, MemoryGrowsWithTheEntries) {
  const SampleCounterSizes small{1024, 16};
  const SampleCounterSizes large{1u << 20, 16};
  // Each entry of an ip map holds a 48-byte element header, a 16-byte key and an 8-byte count,
  // in both generations.
  EXPECT_GE(sample_counter_memory(large) - sample_counter_memory(small),
            2ull * ((1u << 20) - 1024) * (48 + 16 + 8));
}

}  // namespace
}  // namespace profcollect
