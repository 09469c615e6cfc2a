// The loader of the sample counter (sample_counter.bpf.c): a BPF program attached to sampling
// events that counts samples in the kernel by (tgid, ip) instead of writing each sample into a
// ring buffer. It counts no branch stacks.
//
// Counting runs in two generations of count maps. flip() installs the spare generation as the
// live one; the kernel's map-in-map update returns only after every program run that could
// still use the retired maps has ended (synchronize_rcu), so drain_idle() then reads and clears
// the retired generation while the program counts into the other: each sample is drained once,
// or counted in losses(). The usual round is flip(); drain_idle(out); (flip() twice without a
// drain leaves the retired counts in place; they are drained after a later flip).
//
// Addresses are as the program saw them: user-space virtual addresses of process `tgid` (or
// kernel addresses), to be resolved against the mappings valid during the drained interval.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bpf/sample_counter_abi.h"

struct bpf_link;
struct sample_counter_bpf;

namespace profcollect {

struct CountedIp {
  uint32_t tgid;
  uint64_t ip;
  uint64_t count;
};

struct DrainedCounts {
  std::vector<CountedIp> ips;
  void clear();  // keeps the capacity
};

// Entries of the count map (per generation) and of the target set.
struct SampleCounterSizes {
  uint32_t ip_entries, targets;
};

// Sizes for `samples_per_cpu_second` samples per second on each of `cpus` CPUs drained every
// `drain_interval`: room for every sample of an interval to be a distinct ip, with head room
// for a late drain, capped (a sample that finds its map full is counted in losses).
SampleCounterSizes size_sample_counter(double samples_per_cpu_second, unsigned cpus,
                                       std::chrono::milliseconds drain_interval);
// What the maps of these sizes cost in kernel memory, in bytes (both generations and the
// target set; the kernel's preallocated hash-map layout), for the notes.
uint64_t sample_counter_memory(const SampleCounterSizes& sizes);

// What the program saw and did not count, summed over CPUs since the load.
struct SampleCounterLosses {
  uint64_t ips_full = 0;             // an ip count found its map full
  uint64_t filtered = 0;             // samples of processes that are not targets (not a loss)
  uint64_t other_pid_namespace = 0;  // samples of processes outside this process's pid namespace
};

// A BPF call that failed: `error` is the errno, what() says what failed and why.
class BpfError : public std::runtime_error {
 public:
  BpfError(int error, const std::string& message) : std::runtime_error(message), error(error) {}
  int error;
};

class SampleCounter {
 public:
  // Opens and loads the program and creates both generations of count maps. Throws BpfError
  // whose message says why: without the privilege, "loading a BPF program needs CAP_BPF and
  // CAP_PERFMON (or root)"; a refusal by the verifier, with the end of its log.
  SampleCounter(const SampleCounterSizes& sizes, bool all_processes);
  ~SampleCounter();
  SampleCounter(const SampleCounter&) = delete;
  SampleCounter& operator=(const SampleCounter&) = delete;

  // Runs the program on every overflow of the perf event (one per CPU, or per thread); the
  // event's samples then go nowhere else. The counter keeps the link; the caller keeps the fd.
  void attach(int perf_event_fd);

  // The processes counted unless all_processes. Adding to a full set throws BpfError.
  void add_target(uint32_t tgid);
  void remove_target(uint32_t tgid);

  // Makes the spare generation live; returns when no program run uses the retired one.
  void flip();
  // Replaces `out`'s contents with the counts of the generation flip() retired, and clears that
  // generation. Reuses out's capacity and the counter's own buffers: allocates nothing once
  // they have grown to the largest drain.
  void drain_idle(DrainedCounts& out);

  SampleCounterLosses losses() const;

  // The kernel's statistics of the program (bpf_prog_info). They grow only while the sysctl
  // kernel.bpf_stats_enabled is 1.
  struct RunStats {
    uint64_t run_time_ns = 0, run_count = 0;
  };
  RunStats run_stats() const;

  // What every map of the counter holds in kernel memory, as the kernel reports it (memlock of
  // /proc/self/fdinfo).
  uint64_t memory_bytes() const;

 private:
  // The count maps: both generations' fds (owned), the outer map that selects the live one (the
  // skeleton's).
  struct Generations {
    Generations() = default;
    ~Generations();
    Generations(const Generations&) = delete;
    Generations& operator=(const Generations&) = delete;
    int outer = -1;
    int maps[2] = {-1, -1};
  };
  void install(int map_fd);

  std::unique_ptr<sample_counter_bpf, void (*)(sample_counter_bpf*)> skeleton_;
  SampleCounterSizes sizes_;
  Generations ips_;
  int live_ = 0;  // the generation the program counts into
  bool use_batch_ = true;
  std::vector<bpf_link*> links_;
  // Drain buffers, grown once.
  std::vector<struct profcollect_ip_key> ip_keys_;
  std::vector<uint64_t> ip_values_;
};

}  // namespace profcollect
