#include "collector/live/bpf_engine.h"

#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cmath>

#include "collector/host/clock_time.h"
#include "collector/live/cpu_follower.h"
#include "collector/live/live_record_source.h"
#include "collector/host/mmap_budget.h"
#include "collector/host/online_cpus.h"
#include "collector/live/perf_event_set.h"
#include "collector/host/perf_permissions.h"
#include "collector/records/side_band_attr.h"

namespace profcollect {

namespace {

// Samples per CPU per second the sizing assumes: the frequency asked, or for a period of a
// clock event (nanoseconds) its rate; a period of another event, the kernel's default ceiling.
double samples_per_cpu_second(const EventSelection& s) {
  if (s.rate.by_frequency) return static_cast<double>(s.rate.value);
  if (s.engine == SamplingEngine::CpuClock && s.rate.value > 0)
    return 1e9 / static_cast<double>(s.rate.value);
  return 100000;
}

std::string kib(uint64_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

}  // namespace

BpfEngine::BpfEngine(const EventSelection& selection, BpfEngineOptions options)
    : LiveEngine(options.target), options_(std::move(options)) {
  if (selection.branch_hardware != BranchHardware::None) {
    throw EventSelectionError(
        "the BPF engine counts instruction pointers only for now; branch stacks need engine = "
        "perf");
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
  members.push_back({split.dummy, dummy_event_name(split.dummy), EventOutput::RingBuffer});
  EventSetOptions so;
  so.event_name = selection.name;
  const auto cpus = static_cast<uint32_t>(online_cpus().size());
  LockBudget budget = LockBudget::of_this_process(permissions);
  // Side-band only: a small buffer does (what matters is rare records arriving in time).
  so.mmap_pages = choose_mmap_pages(
      budget, cpus, options_.mmap_pages ? options_.mmap_pages : std::optional<uint64_t>(16));
  open_events(std::move(members), event_target, so, permissions);

  const SampleCounterSizes sizes = size_sample_counter(samples_per_cpu_second(selection),
                                                       std::max(1u, cpus), options_.drain_interval);
  counter_ = std::make_unique<SampleCounter>(sizes, /*all_processes=*/!per_cpu_filtered_);
  for (int fd : events_->fds(0)) counter_->attach(fd);
  if (per_cpu_filtered_) {
    for (pid_t p : options_.target.pids) {
      counter_->add_target(static_cast<uint32_t>(p));
      targets_.insert(static_cast<uint32_t>(p));
    }
  }
  backlog_ = std::make_unique<DrainBacklog<Batch>>(options_.backlog_bytes);
  if (event_target.kind == TargetKind::SystemWide && !per_cpu_filtered_) follow_cpus();
  take_monotonic_time_to_epoch();

  notes_ = opening_notes();
  notes_.push_back("BPF engine: " + selection.name +
                   " samples counted in the kernel by (process, address), " +
                   std::to_string(sizes.ip_entries) + " entries per generation (" +
                   kib(counter_->memory_bytes()) + " of kernel memory), drained every " +
                   std::to_string(options_.drain_interval.count()) + " ms");
}

BpfEngine::~BpfEngine() = default;

void BpfEngine::start() {
  last_drain_ = std::chrono::steady_clock::now();
  LiveEngine::start();
}

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

size_t BpfEngine::Batch::memory_bytes() const {
  return records.memory_bytes() + counts.ips.size() * sizeof(CountedIp);
}

size_t BpfEngine::Batch::capacity_bytes() const {
  return records.capacity_bytes() + counts.ips.capacity() * sizeof(CountedIp);
}

void BpfEngine::Batch::clear() {
  records.clear();
  closes_interval = false;
  interval_end = 0;
  counts.clear();
}

void BpfEngine::consume_ready(SamplePipeline& pipeline) {
  Record r;
  while (source_->next(r)) {
    follow_targets(r);
    attribution_.consume(pipeline, r);
  }
}

bool BpfEngine::collect() {
  if (finished_) return false;
  return collect_pass(std::chrono::steady_clock::now() - last_drain_ >= options_.drain_interval);
}

// A pass over the side-band buffers; closing an interval, the count maps flipped and the retired
// generation read, then a second pass for the records stamped before the flip that the first did
// not see. The session attributes the counts against the address spaces of the interval.
bool BpfEngine::collect_pass(bool close_interval) {
  auto budget = [&](size_t filling) {
    RingBufferDrain::Budget b;
    b.samples = backlog_->room(filling);
    b.records = b.samples + backlog_->limit() / 16;
    return b;
  };
  std::unique_ptr<Batch> first = backlog_->acquire();
  source_->reader().read_pass(first->records, budget(0));
  if (cpus_) {
    // A CPU that came online gets the program on its new sampling event.
    cpus_->follow(first->records, [&](size_t index) {
      for (int fd : events_->fds_of_cpu(index, 0)) counter_->attach(fd);
    });
  }
  if (!close_interval) {
    const ReaderTotals& t = first->records.totals;
    if (first->records.empty() && t.skipped_bytes == published_totals_.skipped_bytes &&
        t.corrupt_heads == published_totals_.corrupt_heads &&
        t.dropped.records == published_totals_.dropped.records) {
      backlog_->give_back(std::move(first));
      return false;
    }
    published_totals_ = t;
    backlog_->publish(std::move(first));
    return true;
  }
  backlog_->publish(std::move(first));
  std::unique_ptr<Batch> second = backlog_->acquire();
  second->closes_interval = true;
  second->interval_end = clock_ns(CLOCK_MONOTONIC);
  counter_->flip();
  counter_->drain_idle(second->counts);
  last_drain_ = std::chrono::steady_clock::now();
  if (second->memory_bytes() > backlog_->room(0)) {
    // No room for the interval's counts: they are lost, and said as such.
    uint64_t samples = 0;
    for (const CountedIp& c : second->counts.ips) samples += c.count;
    counts_dropped_.fetch_add(samples, std::memory_order_relaxed);
    second->counts.clear();
  }
  source_->reader().read_pass(second->records, budget(second->memory_bytes()));
  published_totals_ = second->records.totals;
  backlog_->publish(std::move(second));
  return true;
}

void BpfEngine::attribute(SamplePipeline& pipeline, const Batch& batch) {
  source_->release_until(batch.interval_end);
  consume_ready(pipeline);
  for (const CountedIp& c : batch.counts.ips) {
    attribution_.add_count(pipeline, c.tgid, c.ip, c.count, batch.interval_end);
    counted_ += c.count;
  }
  entries_ += batch.counts.ips.size();
  attribution_.end_interval(pipeline);
  ++drains_;
}

void BpfEngine::process(SamplePipeline& pipeline) {
  while (std::unique_ptr<Batch> batch = backlog_->take()) {
    source_->ingest(batch->records);
    consume_ready(pipeline);
    if (batch->closes_interval) attribute(pipeline, *batch);
    backlog_->recycle(std::move(batch));
  }
}

void BpfEngine::finish(SamplePipeline& pipeline) {
  if (finished_) return;
  events_->disable();
  collect_pass(true);
  finished_ = true;
  process(pipeline);
  source_->finish();
  consume_ready(pipeline);
  attribution_.end_interval(pipeline);
}

EngineCounters BpfEngine::counters() const {
  const LiveCounters& c = source_->counters();
  const SampleCounterLosses l = counter_->losses();
  EngineCounters e;
  e.lost.ring_buffer = c.lost_samples;
  e.lost.kernel_dropped = c.dropped_samples;
  e.lost.backlog_full = counts_dropped_.load(std::memory_order_relaxed);
  e.lost.bpf_map_full = l.ips_full;
  e.lost_samples = e.lost.total();
  e.lost_records = c.lost_records;
  e.throttles = c.throttles;
  e.malformed = c.malformed;
  e.corrupt_buffers = c.corrupt_heads;
  e.dropped_records = c.backlog_dropped_records;
  e.backlog_bytes = backlog_->held_bytes();
  e.backlog_peak_bytes = backlog_->peak_bytes();
  e.backlog_limit_bytes = backlog_->limit();
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
  b.not_stored = l.ips_full;
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
  j["distinct_key_ratio"] =
      b.counted ? static_cast<double>(b.entries) / static_cast<double>(b.counted) : 0.0;
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
