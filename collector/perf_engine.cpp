#include "collector/perf_engine.h"

#include <time.h>
#include <unistd.h>

#include "collector/clock_time.h"
#include "collector/live_record_source.h"
#include "collector/mmap_budget.h"
#include "collector/online_cpus.h"
#include "collector/perf_event_set.h"
#include "collector/perf_permissions.h"
#include "collector/side_band_attr.h"

namespace profcollect {

namespace {

// perf's name for its dummy event, with the sampling event's `:u` when the kernel is left out.
std::string dummy_name(const perf_event_attr& dummy) {
  return dummy.exclude_kernel ? "dummy:u" : "dummy";
}

}  // namespace

PerfEngine::PerfEngine(const EventSelection& selection, PerfEngineOptions options)
    : options_(std::move(options)), spe_(selection.engine == SamplingEngine::Spe) {
  PerfPermissions permissions = PerfPermissions::of_this_process();
  perf_event_attr attr = make_sampling_attr(selection, options_.target.kind);
  if (!spe_) {
    // Sample times on CLOCK_MONOTONIC, so they convert to wall-clock time. Not for SPE: its
    // timestamps convert to perf's own clock only (the control page's time_zero), and the
    // side-band must be on the same clock to attribute samples to threads.
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
  }
  std::vector<EventSetMember> members;
  if (options_.side_band == SideBand::DummyEvent || spe_) {
    // SPE: the side-band on a dummy event as perf's tracking event, with context switches
    // (the CPU's current task, for records without a CONTEXT packet).
    SideBandAttrs split = split_side_band(attr);
    if (spe_) split.dummy.context_switch = 1;
    members.push_back({split.sampling, selection.name, EventOutput::RingBuffer});
    members.push_back({split.dummy, dummy_name(split.dummy), EventOutput::RingBuffer});
  } else {
    members.push_back({attr, selection.name, EventOutput::RingBuffer});
  }
  for (const EventSetMember& m : members) event_names_.push_back(m.name);
  EventSetOptions so;
  so.event_name = selection.name;
  LockBudget budget = LockBudget::of_this_process(permissions);
  const auto buffers = static_cast<uint32_t>(online_cpus().size());
  if (spe_) {
    const AuxBufferPages pages = choose_aux_buffer_pages(budget, buffers, options_.mmap_pages);
    so.mmap_pages = pages.data_pages;
    so.aux_pages = pages.aux_pages;
  } else {
    so.mmap_pages = choose_mmap_pages(budget, buffers, options_.mmap_pages);
  }
  events_ = std::make_unique<PerfEventSet>(std::move(members), options_.target, so, permissions);
  source_ = std::make_unique<LiveRecordSource>(*events_);
  if (spe_) {
    std::vector<SpeLiveReader::Area> areas;
    const std::vector<AuxBuffer*> aux = events_->aux_buffers();
    for (size_t i = 0; i < aux.size(); ++i)
      areas.push_back({aux[i], static_cast<uint32_t>(events_->cpus()[i])});
    source_->read_spe(selection.spe_pmu.type, std::move(areas));
    time_to_epoch_.reset();  // perf's clock has no known relation to the wall clock here
  } else {
    time_to_epoch_ = static_cast<int64_t>(clock_ns(CLOCK_REALTIME)) - static_cast<int64_t>(clock_ns(CLOCK_MONOTONIC));
  }
}

PerfEngine::~PerfEngine() = default;

void PerfEngine::start() {
  if (options_.target.kind == TargetKind::Command) return;  // enable_on_exec starts the events
  events_->enable();
  source_->add_existing_processes(options_.target);
}

std::vector<int> PerfEngine::descriptors() const { return source_->pollable_fds(); }

bool PerfEngine::targets_alive() const {
  return options_.target.kind != TargetKind::Processes || events_->live_event_count() > 0;
}

void PerfEngine::drain(SamplePipeline& pipeline) {
  source_->drain();
  restart_after_truncation();
  Record r;
  while (source_->next(r)) pipeline.consume(r);
  resync_after_loss();
}

void PerfEngine::absorb() {
  // After finish() the source takes no more reads (and the events are disabled: nothing comes).
  if (!finished_) {
    source_->drain();
    restart_after_truncation();
  }
}

void PerfEngine::restart_after_truncation() {
  // A full AUX area makes the kernel stop the event (perf_aux_output_begin finds no room: a
  // pending disable) and say so with a TRUNCATED record. Its bytes have just been given back,
  // so the events are enabled again (a no-op on those still running; a command's events wrote
  // nothing before its exec enabled them); the gap stays counted.
  const SpeLiveReader* spe = source_->spe();
  if (!spe || spe->counters().truncated == truncations_seen_) return;
  truncations_seen_ = spe->counters().truncated;
  events_->enable();
  ++spe_restarts_;
}

void PerfEngine::finish(SamplePipeline& pipeline) {
  finished_ = true;
  events_->disable();
  source_->drain();
  source_->finish();
  Record r;
  while (source_->next(r)) pipeline.consume(r);
}

void PerfEngine::resync_after_loss() {
  // A ring-buffer overrun may have taken MMAP2 records with it, and then every later sample of
  // that mapping would count as unmapped. The target processes' mappings are read again from
  // /proc (at most once a second); what is already known is simply replaced.
  uint64_t lost = source_->counters().lost_records;
  if (lost == lost_records_seen_ || options_.target.kind == TargetKind::SystemWide) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_resync_ < std::chrono::seconds(1)) return;
  lost_records_seen_ = lost;
  last_resync_ = now;
  for (pid_t p : options_.target.pids) source_->add_existing_process(p);
}

EngineCounters PerfEngine::counters() const {
  const LiveCounters& c = source_->counters();
  EngineCounters e;
  e.lost_samples = c.lost_samples + c.dropped_samples;
  e.lost_records = c.lost_records;
  e.throttles = c.throttles;
  e.malformed = c.malformed;
  e.corrupt_buffers = c.corrupt_heads;
  return e;
}

std::vector<std::string> PerfEngine::notes() const { return events_->notes(); }

void PerfEngine::describe(nlohmann::ordered_json& status) const {
  const SpeLiveReader* spe = source_->spe();
  if (!spe) return;
  const LiveCounters& c = source_->counters();
  const SpeDecodeTally& t = source_->session().spe;
  const SpeLiveCounters& r = spe->counters();
  status["arm_spe"] = {
      {"aux_pages", events_->aux_buffers().empty() || !events_->aux_buffers()[0]
                        ? 0 : events_->aux_buffers()[0]->size() / static_cast<size_t>(::sysconf(_SC_PAGESIZE))},
      {"aux_records", c.aux_records},
      {"aux_bytes", c.aux_bytes},
      {"aux_truncated", c.aux_truncated},
      {"aux_partial", c.aux_partial},
      {"aux_collisions", c.aux_collisions},
      {"restarts_after_truncation", spe_restarts_},
      {"aux_ranges_decoded", r.ranges},
      {"aux_ranges_wrapped", r.wrapped_ranges},
      {"aux_ranges_invalid", r.invalid_ranges},
      {"aux_bytes_unannounced", r.bytes_unannounced},
      {"records", t.records},
      {"taken_branches", t.taken_branches},
      {"records_without_pc", t.records_without_pc},
      {"records_dropped", t.records_dropped},
      {"bytes_skipped", t.bytes_skipped},
      {"bytes_truncated", t.bytes_truncated},
      {"threads_from_context", r.threads_from_context},
      {"threads_from_switches", r.threads_from_switches},
      {"threads_unknown", r.threads_unknown},
  };
}

std::vector<perf_event_attr> PerfEngine::opened_attrs() const {
  std::vector<perf_event_attr> out;
  for (size_t i = 0; i < events_->member_count(); ++i) out.push_back(events_->member(i).attr);
  return out;
}

}  // namespace profcollect
