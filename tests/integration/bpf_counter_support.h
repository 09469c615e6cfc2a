// What the sample counter's tests share: sampling events with no ring buffer whose overflows
// go to the BPF program, a child that spins over many distinct instructions, the kernel's
// BPF run statistics switched on for a test, and the reason a test cannot run here.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bpf/sample_counter.h"

namespace profcollect::test {

// Why the sample counter cannot be tested here (not root, BPF refused), or nullopt.
std::optional<std::string> sample_counter_unavailable();

// cpu-clock sampling every `period_ns` of CPU time, no ring buffer, opened disabled: one event
// per online CPU for every process (pid -1), or per CPU for one process.
class ClockEvents {
 public:
  ClockEvents(uint64_t period_ns, pid_t pid = -1);
  ~ClockEvents();
  ClockEvents(const ClockEvents&) = delete;
  ClockEvents& operator=(const ClockEvents&) = delete;

  const std::vector<int>& fds() const { return fds_; }
  void enable();
  void disable();
  // Overflows the kernel's counts imply: the sum over events of count / period.
  uint64_t periods_elapsed() const;

 private:
  uint64_t period_ns_;
  std::vector<int> fds_;
};

// A forked child that runs over a slide of `instructions` no-ops and jumps back, so that its
// samples land on that many distinct addresses; killed and reaped on destruction.
class SpinningChild {
 public:
  explicit SpinningChild(size_t instructions = 16384);
  ~SpinningChild();
  SpinningChild(const SpinningChild&) = delete;
  SpinningChild& operator=(const SpinningChild&) = delete;
  pid_t pid() const { return pid_; }
  // The slide's address range in the child, [begin, end).
  uint64_t begin() const { return begin_; }
  uint64_t end() const { return end_; }

 private:
  pid_t pid_ = -1;
  uint64_t begin_ = 0, end_ = 0;
};

// The kernel counts BPF run time and runs while this lives (BPF_ENABLE_STATS, what the sysctl
// kernel.bpf_stats_enabled does, ended with the fd whatever way the test ends).
class BpfRunStatistics {
 public:
  BpfRunStatistics();
  ~BpfRunStatistics();
  BpfRunStatistics(const BpfRunStatistics&) = delete;
  BpfRunStatistics& operator=(const BpfRunStatistics&) = delete;

 private:
  int fd_;
};

// The sum of the drained ip counts.
uint64_t total(const DrainedCounts& counts);

}  // namespace profcollect::test
