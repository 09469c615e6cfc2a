// The sample counter's map sizes (bpf/sample_counter.h): room for every sample of a drain
// interval to be a distinct key, with head room, within caps; and a memory figure that grows
// with the sizes and the branch maps.
#include <gtest/gtest.h>

#include <bit>

#include "bpf/sample_counter.h"

namespace profcollect {
namespace {

using namespace std::chrono_literals;

TEST(BpfSampleCounterSizes, HoldEveryDistinctSampleOfAnIntervalWithHeadRoom) {
  // 4000 Hz on 8 CPUs drained every 250 ms: 8000 samples an interval.
  const SampleCounterSizes s = size_sample_counter(4000, 8, 250ms, false);
  EXPECT_GE(s.ip_entries, 8000u * 5 / 4);
  EXPECT_TRUE(std::has_single_bit(s.ip_entries));
  EXPECT_EQ(s.branch_entries, 0u);  // no branch maps without branch stacks
  EXPECT_EQ(s.range_entries, 0u);
  EXPECT_GT(s.targets, 0u);

  const SampleCounterSizes b = size_sample_counter(4000, 8, 250ms, true);
  EXPECT_EQ(b.ip_entries, s.ip_entries);
  EXPECT_GE(b.branch_entries, 8000u * 32);  // up to 32 taken branches a sample
  EXPECT_GE(b.range_entries, 8000u * 31);
}

TEST(BpfSampleCounterSizes, StayWithinTheirFloorAndCap) {
  const SampleCounterSizes tiny = size_sample_counter(1, 1, 1ms, true);
  EXPECT_GE(tiny.ip_entries, 1024u);
  EXPECT_GE(tiny.branch_entries, 4096u);
  const SampleCounterSizes huge = size_sample_counter(1e6, 1024, 60000ms, true);
  EXPECT_EQ(huge.ip_entries, 1u << 22);
  EXPECT_EQ(huge.branch_entries, 1u << 20);
  EXPECT_EQ(huge.range_entries, 1u << 20);
}

TEST(BpfSampleCounterSizes, MemoryGrowsWithTheEntriesAndTheBranchMaps) {
  const SampleCounterSizes small{1024, 4096, 4096, 16};
  const SampleCounterSizes large{1u << 20, 4096, 4096, 16};
  // Each entry of an ip map holds a 48-byte element header, a 16-byte key and an 8-byte count,
  // in both generations.
  EXPECT_GE(sample_counter_memory(large, false) - sample_counter_memory(small, false),
            2ull * ((1u << 20) - 1024) * (48 + 16 + 8));
  EXPECT_GT(sample_counter_memory(small, true), sample_counter_memory(small, false));
}

}  // namespace
}  // namespace profcollect
