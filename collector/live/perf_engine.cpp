#include "collector/live/perf_engine.h"

#include <unistd.h>

#include "collector/live/cpu_follower.h"
#include "collector/live/live_record_source.h"
#include "collector/host/mmap_budget.h"
#include "collector/host/online_cpus.h"
#include "collector/live/perf_event_set.h"
#include "collector/host/perf_permissions.h"
#include "collector/records/side_band_attr.h"

namespace profcollect {

PerfEngine::PerfEngine(const EventSelection& selection, PerfEngineOptions options)
    : LiveEngine(options.target),
      options_(std::move(options)),
      backlog_(options_.backlog_bytes),
      spe_(selection.engine == SamplingEngine::Spe) {
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
    members.push_back({split.dummy, dummy_event_name(split.dummy), EventOutput::RingBuffer});
  } else {
    members.push_back({attr, selection.name, EventOutput::RingBuffer});
  }
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
  open_events(std::move(members), options_.target, so, permissions);
  if (spe_) {
    std::vector<SpeLiveReader::Area> areas;
    const std::vector<AuxBuffer*> aux = events_->aux_buffers();
    for (size_t i = 0; i < aux.size(); ++i)
      areas.push_back({aux[i], static_cast<uint32_t>(events_->cpus()[i])});
    source_->read_spe(selection.spe_pmu.type, std::move(areas));
    if (!aux.empty() && aux[0])
      spe_aux_pages_ = aux[0]->size() / static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    // No time_to_epoch(): perf's clock has no known relation to the wall clock here.
  } else {
    take_monotonic_time_to_epoch();
    if (options_.target.kind == TargetKind::SystemWide) follow_cpus();
  }
}

PerfEngine::~PerfEngine() = default;

bool PerfEngine::targets_alive() const {
  return options_.target.kind != TargetKind::Processes || events_->live_event_count() > 0;
}

bool PerfEngine::collect() {
  // After finish() the source takes no more reads (and the events are disabled: nothing comes).
  if (finished_) return false;
  std::unique_ptr<RecordBatch> batch = backlog_.acquire();
  // Samples fit what the backlog has room for; side-band records (rare, and without them later
  // samples cannot be resolved) have a sixteenth more.
  RingBufferDrain::Budget budget;
  budget.samples = backlog_.room(0);
  budget.records = budget.samples + backlog_.limit() / 16;
  source_->reader().read_pass(*batch, budget);
  if (cpus_) cpus_->follow(*batch);
  // A full AUX area makes the kernel stop the event (perf_aux_output_begin finds no room: a
  // pending disable) and say so with a TRUNCATED record. Its bytes have just been given back,
  // so the events are enabled again (a no-op on those still running; a command's events wrote
  // nothing before its exec enabled them); the gap stays counted.
  if (batch->totals.aux_truncations != truncations_seen_) {
    truncations_seen_ = batch->totals.aux_truncations;
    events_->enable();
    spe_restarts_.fetch_add(1, std::memory_order_relaxed);
  }
  const ReaderTotals& t = batch->totals;
  const bool news = !batch->empty() || t.skipped_bytes != published_totals_.skipped_bytes ||
                    t.corrupt_heads != published_totals_.corrupt_heads ||
                    t.dropped.samples != published_totals_.dropped.samples ||
                    t.dropped.records != published_totals_.dropped.records;
  if (!news) {
    backlog_.give_back(std::move(batch));
    return false;
  }
  published_totals_ = t;
  backlog_.publish(std::move(batch));
  return true;
}

void PerfEngine::process(SamplePipeline& pipeline) {
  while (std::unique_ptr<RecordBatch> batch = backlog_.take()) {
    source_->ingest(*batch);
    backlog_.recycle(std::move(batch));
    consume_ready(pipeline);
  }
}

void PerfEngine::settle(SamplePipeline& pipeline, uint64_t monotonic_ns) {
  if (finished_) return;
  source_->release_until(monotonic_ns);
  consume_ready(pipeline);
}

void PerfEngine::consume_ready(SamplePipeline& pipeline) {
  Record r;
  while (source_->next(r)) {
    const LiveCounters& c = source_->counters();
    const uint64_t losses = c.lost_records + c.backlog_dropped_records;
    if (losses != losses_seen_) {
      // Records were lost here: any process may have mapped (or started) meanwhile unseen.
      losses_seen_ = losses;
      resyncing_ = true;
      resynced_.clear();
    }
    if (resyncing_) {
      if (const auto* sample = std::get_if<SampleRecord>(&r)) resync_if_lost(*sample, pipeline);
    }
    pipeline.consume(r);
  }
}

void PerfEngine::resync_if_lost(const SampleRecord& s, SamplePipeline& pipeline) {
  // Kernel samples resolve against the kernel's own mappings, which no loss takes away; pid 0 is
  // the idle task or a process outside this pid namespace, neither of which /proc describes.
  if (s.cpumode != CpuMode::User || s.pid == 0 || s.pid == kNoPid ||
      s.pid == static_cast<uint32_t>(::getpid()))
    return;
  if (pipeline.processes().find(s.pid, s.ip, s.cpumode)) return;
  if (!resynced_.insert(s.pid).second) return;
  // An exec may have been lost too: what is known of the process goes, and /proc says what is
  // mapped now. The records go straight to the pipeline, ahead of this sample.
  const bool read = source_->synthesize_now(static_cast<pid_t>(s.pid),
                                            [&](const Record& r) { pipeline.consume(r); });
  if (read) ++resynced_processes_;
}

void PerfEngine::finish(SamplePipeline& pipeline) {
  events_->disable();
  collect();
  finished_ = true;
  process(pipeline);
  source_->finish();
  consume_ready(pipeline);
}

EngineCounters PerfEngine::counters() const {
  const LiveCounters& c = source_->counters();
  EngineCounters e;
  e.lost.ring_buffer = c.lost_samples;
  e.lost.kernel_dropped = c.dropped_samples;
  e.lost.backlog_full = c.backlog_dropped_samples;
  e.lost_samples = e.lost.total();
  e.lost_records = c.lost_records;
  e.throttles = c.throttles;
  e.malformed = c.malformed;
  e.corrupt_buffers = c.corrupt_heads;
  e.dropped_records = c.backlog_dropped_records;
  e.resynced_processes = resynced_processes_;
  e.backlog_bytes = backlog_.held_bytes();
  e.backlog_peak_bytes = backlog_.peak_bytes();
  e.backlog_limit_bytes = backlog_.limit();
  return e;
}

std::vector<std::string> PerfEngine::notes() const { return opening_notes(); }

void PerfEngine::describe(nlohmann::ordered_json& status) const {
  const SpeLiveReader* spe = source_->spe();
  if (!spe) return;
  const LiveCounters& c = source_->counters();
  const SpeDecodeTally& t = source_->session().spe;
  const SpeLiveCounters& r = spe->counters();
  status["arm_spe"] = {
      {"aux_pages", spe_aux_pages_},
      {"aux_records", c.aux_records},
      {"aux_bytes", c.aux_bytes},
      {"aux_truncated", c.aux_truncated},
      {"aux_partial", c.aux_partial},
      {"aux_collisions", c.aux_collisions},
      {"restarts_after_truncation", spe_restarts_.load(std::memory_order_relaxed)},
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
