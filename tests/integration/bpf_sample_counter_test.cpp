// The BPF sample counter (bpf/sample_counter.h) against the kernel's own figures: every run of
// the program, which the kernel counts itself (run_cnt, with BPF statistics on), is drained
// exactly once or counted as a loss or as filtered, over many generation flips under load; and
// the runs match the overflows the sampling events' counts imply.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "bpf/sample_counter.h"
#include "tests/integration/bpf_counter_support.h"
#include "tests/support/allocation_counter.h"

namespace profcollect::test {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kPeriodNs = 250000;  // 4 kHz of CPU time on each CPU

#define SKIP_UNLESS_SAMPLE_COUNTER_LOADS()                                   \
  do {                                                                       \
    if (auto reason = sample_counter_unavailable()) GTEST_SKIP() << *reason; \
  } while (0)

// What a run of flips and drains saw.
struct Collected {
  uint64_t drained = 0;
  uint64_t drains = 0;
  size_t largest_drain = 0;                              // entries
  uint64_t entries = 0;                                  // drained keys, summed over the drains
  std::chrono::nanoseconds flip_time{}, longest_flip{};  // flip() alone
  size_t allocations = 0;                                // made by flip() and drain_idle()
  std::map<uint32_t, uint64_t> by_tgid;
  DrainedCounts last;
};

// Enables the events, flips and drains every 10 ms for `duration`, disables them, and drains
// both generations so that nothing is left in the maps. `counts` holds room for a whole map.
Collected flip_and_drain(SampleCounter& counter, ClockEvents& events,
                         std::chrono::milliseconds duration, size_t ip_entries) {
  Collected out;
  DrainedCounts counts;
  counts.ips.reserve(ip_entries);
  AllocationCounter allocations;
  allocations.pause();
  auto take = [&] {
    allocations.resume();
    const auto start = std::chrono::steady_clock::now();
    counter.flip();
    const auto took = std::chrono::steady_clock::now() - start;
    out.flip_time += took;
    out.longest_flip =
        std::max(out.longest_flip, std::chrono::duration_cast<std::chrono::nanoseconds>(took));
    counter.drain_idle(counts);
    allocations.pause();
    ++out.drains;
    out.largest_drain = std::max(out.largest_drain, counts.ips.size());
    out.entries += counts.ips.size();
    for (const CountedIp& c : counts.ips) {
      out.drained += c.count;
      out.by_tgid[c.tgid] += c.count;
    }
  };
  events.enable();
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(10ms);
    take();
  }
  events.disable();
  take();
  take();
  out.last = counts;
  out.allocations = allocations.count();
  return out;
}

TEST(BpfSampleCounter, EveryRunIsDrainedOnceOrCountedAcrossManyFlips) {
  SKIP_UNLESS_SAMPLE_COUNTER_LOADS();
  BpfRunStatistics stats;
  const unsigned cpus = std::thread::hardware_concurrency();
  const SampleCounterSizes sizes = size_sample_counter(1e9 / kPeriodNs, cpus, 10ms);
  SampleCounter counter(sizes, true);
  ClockEvents events(kPeriodNs);
  for (int fd : events.fds()) counter.attach(fd);
  SpinningChild busy;

  Collected got = flip_and_drain(counter, events, 2000ms, sizes.ip_entries);
  const SampleCounter::RunStats runs = counter.run_stats();
  const SampleCounterLosses losses = counter.losses();

  EXPECT_GT(got.drains, 20u);      // many flips, whatever the load
  EXPECT_EQ(got.allocations, 0u);  // once `counts` holds room for a whole map
  EXPECT_EQ(losses.filtered, 0u);
  EXPECT_GT(runs.run_count, 1000u);
  // The kernel counts every run itself: each is drained exactly once or counted as lost.
  EXPECT_EQ(got.drained + losses.ips_full, runs.run_count)
      << "drained " << got.drained << " lost " << losses.ips_full;
  EXPECT_GT(got.by_tgid[busy.pid()], 0u);
  // And the runs are the events' overflows. cpu-clock overflows once per timer callback, and a
  // callback that comes late skips the periods it missed (hrtimer_forward_now in
  // perf_swevent_hrtimer): count / period per event bounds the runs from above (plus the period
  // in progress), and late timers keep them below it: a few percent on a loaded virtual machine,
  // whose vCPUs the host deschedules.
  const uint64_t periods = events.periods_elapsed();
  EXPECT_LE(runs.run_count, periods + events.fds().size());
  EXPECT_GE(static_cast<double>(runs.run_count), 0.9 * static_cast<double>(periods));
  if (runs.run_count) {
    std::printf(
        "program: %.0f ns a run over %llu runs; %llu drains; %llu periods; %.3f distinct "
        "keys a sample; flip %.2f ms on average, %.2f ms at most\n",
        static_cast<double>(runs.run_time_ns) / runs.run_count,
        static_cast<unsigned long long>(runs.run_count),
        static_cast<unsigned long long>(got.drains), static_cast<unsigned long long>(periods),
        got.drained ? static_cast<double>(got.entries) / got.drained : 0.0,
        got.flip_time.count() / 1e6 / got.drains, got.longest_flip.count() / 1e6);
  }
}

TEST(BpfSampleCounter, CountsOnlyTheTargetProcessAndTheRestAsFiltered) {
  SKIP_UNLESS_SAMPLE_COUNTER_LOADS();
  BpfRunStatistics stats;
  const unsigned cpus = std::thread::hardware_concurrency();
  SampleCounter counter(size_sample_counter(1e9 / kPeriodNs, cpus, 10ms), false);
  ClockEvents events(kPeriodNs);
  for (int fd : events.fds()) counter.attach(fd);
  SpinningChild target, other;
  counter.add_target(static_cast<uint32_t>(target.pid()));

  const Collected got = flip_and_drain(counter, events, 1000ms, 1024);
  const SampleCounter::RunStats runs = counter.run_stats();
  const SampleCounterLosses losses = counter.losses();

  ASSERT_EQ(got.by_tgid.size(), 1u);
  EXPECT_EQ(got.by_tgid.begin()->first, static_cast<uint32_t>(target.pid()));
  EXPECT_GT(got.drained, 0u);
  EXPECT_GT(losses.filtered, 0u);  // the other child, the idle task, this test
  EXPECT_EQ(got.drained + losses.ips_full + losses.filtered, runs.run_count);
  // Every counted ip is the target's own: on its slide, or in the kernel on its behalf.
  for (const CountedIp& c : got.last.ips) EXPECT_EQ(c.tgid, static_cast<uint32_t>(target.pid()));

  // Once removed, the target is filtered like the rest.
  counter.remove_target(static_cast<uint32_t>(target.pid()));
  const Collected after = flip_and_drain(counter, events, 200ms, 1024);
  EXPECT_EQ(after.drained, 0u);
  EXPECT_EQ(
      counter.losses().filtered - losses.filtered + counter.losses().ips_full - losses.ips_full,
      counter.run_stats().run_count - runs.run_count);
}

TEST(BpfSampleCounter, AFullIpMapCountsItsLossesAndLosesNothingElse) {
  SKIP_UNLESS_SAMPLE_COUNTER_LOADS();
  BpfRunStatistics stats;
  constexpr uint32_t kTiny = 4;
  SampleCounter counter({kTiny, 16}, false);
  ClockEvents events(kPeriodNs);
  for (int fd : events.fds()) counter.attach(fd);
  SpinningChild target(16384);  // 16384 distinct addresses for 4 entries
  counter.add_target(static_cast<uint32_t>(target.pid()));

  const Collected got = flip_and_drain(counter, events, 1000ms, 1024);
  const SampleCounter::RunStats runs = counter.run_stats();
  const SampleCounterLosses losses = counter.losses();

  EXPECT_LE(got.largest_drain, kTiny);
  EXPECT_GT(losses.ips_full, 0u);
  EXPECT_GT(got.drained, 0u);
  EXPECT_EQ(got.drained + losses.ips_full + losses.filtered, runs.run_count)
      << "drained " << got.drained << " full " << losses.ips_full << " filtered "
      << losses.filtered;
}

TEST(BpfSampleCounter, TheMemoryEstimateIsWhatTheKernelReports) {
  SKIP_UNLESS_SAMPLE_COUNTER_LOADS();
  const SampleCounterSizes sizes{1u << 16, 16384};
  SampleCounter counter(sizes, false);
  const double estimate = static_cast<double>(sample_counter_memory(sizes));
  const double kernel = static_cast<double>(counter.memory_bytes());
  // The kernel's figure (fdinfo memlock) also holds the small maps the estimate leaves out.
  EXPECT_NEAR(estimate, kernel, 0.05 * kernel);
}

}  // namespace
}  // namespace profcollect::test
