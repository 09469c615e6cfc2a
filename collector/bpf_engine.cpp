#include "collector/bpf_engine.h"

#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cmath>

#include "bpf/sample_counter.h"
#include "collector/clock_time.h"
#include "collector/live_record_source.h"
#include "collector/mmap_budget.h"
#include "collector/online_cpus.h"
#include "collector/perf_event_set.h"
#include "collector/perf_permissions.h"
#include "collector/side_band_attr.h"

namespace profcollect {

namespace {

std::string dummy_name(const perf_event_attr& dummy) { return dummy.exclude_kernel ? "dummy:u" : "dummy"; }

// Samples per CPU per second the sizing assumes: the frequency asked, or for a period of a
// clock event (nanoseconds) its rate; a period of another event, the kernel's default ceiling.
double samples_per_cpu_second(const EventSelection& s) {
  if (s.rate.by_frequency) return static_cast<double>(s.rate.value);
  if (s.engine == SamplingEngine::CpuClock && s.rate.value > 0) return 1e9 / static_cast<double>(s.rate.value);
  return 100000;
}

std::string kib(uint64_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

}  // namespace

BpfEngine::BpfEngine(const EventSelection& selection, BpfEngineOptions options) : options_(std::move(options)) {
  if (selection.branch_hardware != BranchHardware::None) {
    throw EventSelectionError(
        "the BPF engine counts instruction pointers only for now; branch stacks need engine = perf");
  }
  PerfPermissions permissions = PerfPermissions::of_this_process();
  // --pid: one event per CPU, the program keeping to the target processes -- when asked: the
  // kernel then follows no child (one is added when its FORK record is read, and its samples
  // before that are filtered), where per-thread inherited events follow every child at once.
  per_cpu_filtered_ = options_.target.kind == TargetKind::Processes && options_.per_cpu_targets;
  CollectionTarget event_target = options_.target;
  if (per_cpu_filtered_) event_target = CollectionTarget{TargetKind::SystemWide, {}};
  perf_event_attr attr = make_sampling_attr(selection, event_target.kind);
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  const SideBandAttrs split = split_side_band(attr);
  std::vector<EventSetMember> members;
  members.push_back({split.sampling, selection.name, EventOutput::None});
  members.push_back({split.dummy, dummy_name(split.dummy), EventOutput::RingBuffer});
  for (const EventSetMember& m : members) event_names_.push_back(m.name);
  EventSetOptions so;
  so.event_name = selection.name;
  const auto cpus = static_cast<uint32_t>(online_cpus().size());
  LockBudget budget = LockBudget::of_this_process(permissions);
  // Side-band only: a small buffer does (what matters is rare records arriving in time).
  so.mmap_pages = choose_mmap_pages(budget, cpus, options_.mmap_pages ? options_.mmap_pages : std::optional<uint64_t>(16));
  events_ = std::make_unique<PerfEventSet>(std::move(members), event_target, so, permissions);

  const SampleCounterSizes sizes =
      size_sample_counter(samples_per_cpu_second(selection), std::max(1u, cpus), options_.drain_interval, false);
  counter_ = std::make_unique<SampleCounter>(sizes, /*all_processes=*/!per_cpu_filtered_, /*branch_stacks=*/false);
  for (int fd : events_->fds(0)) counter_->attach(fd);
  if (per_cpu_filtered_) {
    for (pid_t p : options_.target.pids) {
      counter_->add_target(static_cast<uint32_t>(p));
      targets_.insert(static_cast<uint32_t>(p));
    }
  }
  drained_ = std::make_unique<DrainedCounts>();
  source_ = std::make_unique<LiveRecordSource>(*events_);
  time_to_epoch_ = static_cast<int64_t>(clock_ns(CLOCK_REALTIME)) - static_cast<int64_t>(clock_ns(CLOCK_MONOTONIC));

  notes_ = events_->notes();
  notes_.push_back("BPF engine: " + selection.name + " samples counted in the kernel by (process, address), " +
                   std::to_string(sizes.ip_entries) + " entries per generation (" +
                   kib(counter_->memory_bytes()) + " of kernel memory), drained every " +
                   std::to_string(options_.drain_interval.count()) + " ms");
}

BpfEngine::~BpfEngine() = default;

void BpfEngine::start() {
  last_drain_ = std::chrono::steady_clock::now();
  if (options_.target.kind == TargetKind::Command) return;  // enable_on_exec starts the events
  events_->enable();
  source_->add_existing_processes(options_.target);
}

std::vector<int> BpfEngine::descriptors() const { return source_->pollable_fds(); }

bool BpfEngine::targets_alive() const {
  switch (options_.target.kind) {
    case TargetKind::SystemWide:
      return true;
    case TargetKind::Command:
      return events_->live_event_count() > 0;
    case TargetKind::Processes:
      if (!per_cpu_filtered_) return events_->live_event_count() > 0;
      for (uint32_t p : targets_) {
        if (::kill(static_cast<pid_t>(p), 0) == 0 || errno == EPERM) return true;
      }
      return false;
  }
  return true;
}

// A target's new child process becomes a target; an ended target leaves the set.
void BpfEngine::follow_targets(const Record& r) {
  if (!per_cpu_filtered_) return;
  const auto* t = std::get_if<TaskRecord>(&r);
  if (!t || t->pid == t->ppid) return;
  if (t->is_exit) {
    if (t->pid == t->tid && targets_.erase(t->pid)) counter_->remove_target(t->pid);
  } else if (targets_.count(t->ppid) && targets_.insert(t->pid).second) {
    counter_->add_target(t->pid);
  }
}

void BpfEngine::consume_ready(SamplePipeline& pipeline) {
  Record r;
  while (source_->next(r)) {
    follow_targets(r);
    attribution_.consume(pipeline, r);
  }
}

// Closes the interval: the counts so far are retired (the swap returns once no program run can
// still add to them), the side-band records up to the swap are read, and the counts attributed
// against the address spaces of the interval.
void BpfEngine::close_interval(SamplePipeline& pipeline) {
  source_->drain();
  consume_ready(pipeline);
  const uint64_t end = clock_ns(CLOCK_MONOTONIC);
  counter_->flip();
  counter_->drain_idle(*drained_);
  // Records stamped before the swap that the first pass did not see.
  source_->drain();
  source_->release_until(end);
  consume_ready(pipeline);
  for (const CountedIp& c : drained_->ips) {
    attribution_.add_count(pipeline, c.tgid, c.ip, c.count, end);
    counted_ += c.count;
  }
  entries_ += drained_->ips.size();
  attribution_.end_interval(pipeline);
  ++drains_;
  last_drain_ = std::chrono::steady_clock::now();
}

void BpfEngine::drain(SamplePipeline& pipeline) {
  if (finished_) return;
  if (std::chrono::steady_clock::now() - last_drain_ >= options_.drain_interval) {
    close_interval(pipeline);
  } else {
    source_->drain();
    consume_ready(pipeline);
  }
}

void BpfEngine::absorb() {
  // The counts wait in the kernel's maps; only the side-band buffers can fill.
  if (!finished_) source_->drain();
}

void BpfEngine::finish(SamplePipeline& pipeline) {
  if (finished_) return;
  events_->disable();
  close_interval(pipeline);
  finished_ = true;
  source_->finish();
  consume_ready(pipeline);
  attribution_.end_interval(pipeline);
}

EngineCounters BpfEngine::counters() const {
  const LiveCounters& c = source_->counters();
  const SampleCounterLosses l = counter_->losses();
  EngineCounters e;
  e.lost_samples = c.lost_samples + c.dropped_samples + l.ips_full + l.branches_full + l.ranges_full;
  e.lost_records = c.lost_records;
  e.throttles = c.throttles;
  e.malformed = c.malformed;
  e.corrupt_buffers = c.corrupt_heads;
  return e;
}

BpfEngine::BpfCounters BpfEngine::bpf_counters() const {
  BpfCounters b;
  const SampleCounterLosses l = counter_->losses();
  const SampleCounter::RunStats run = counter_->run_stats();
  b.drains = drains_;
  b.entries = entries_;
  b.counted = counted_;
  b.ambiguous = attribution_.counts().ambiguous;
  b.not_stored = l.ips_full + l.branches_full + l.ranges_full;
  b.filtered = l.filtered;
  b.other_pid_namespace = l.other_pid_namespace;
  b.run_time_ns = run.run_time_ns;
  b.run_count = run.run_count;
  b.map_bytes = counter_->memory_bytes();
  return b;
}

void BpfEngine::describe(nlohmann::ordered_json& status) const {
  const BpfCounters b = bpf_counters();
  nlohmann::ordered_json j;
  j["drains"] = b.drains;
  j["entries"] = b.entries;
  j["counted"] = b.counted;
  // Entries drained per sample counted: what a drain moves against what a ring buffer would.
  j["distinct_key_ratio"] = b.counted ? static_cast<double>(b.entries) / static_cast<double>(b.counted) : 0.0;
  j["ambiguous"] = b.ambiguous;
  j["not_stored"] = b.not_stored;
  j["filtered"] = b.filtered;
  j["other_pid_namespace"] = b.other_pid_namespace;
  j["program_run_ns"] = b.run_time_ns;
  j["program_runs"] = b.run_count;
  j["map_bytes"] = b.map_bytes;
  status["bpf"] = j;
}

}  // namespace profcollect
