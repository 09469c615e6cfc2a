// The perf_event engine: one sampling event per CPU or per thread (cycles, cpu-clock, a raw
// event, LBR, BRS, Arm SPE), with one ring buffer per CPU, decoded by LiveRecordSource in time
// order. Arm SPE also maps an AUX area per buffer, read by the PERF_RECORD_AUX records
// (spe_live_reader.h), its side-band on a dummy event with context switches.
// The task and mmap records (side-band) come from the sampling event itself (the default), or
// from a software dummy event opened beside it and writing into the same buffers
// (SideBand::DummyEvent, as perf record's tracking event; side_band_attr.h): then the sampling
// event carries samples only, the layout the BPF engine's events will have.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <unordered_set>
#include <optional>
#include <string>
#include <vector>

#include "collector/live/live_engine.h"
#include "collector/pipeline/collection_target.h"
#include "collector/live/drain_backlog.h"
#include "collector/live/record_batch.h"
#include "collector/live/event_selection.h"

namespace profcollect {

// What carries the side-band records (COMM, FORK/EXIT, MMAP2).
enum class SideBand {
  SamplingEvent,  // the sampling event's own mmap/comm/task bits
  DummyEvent,     // a PERF_COUNT_SW_DUMMY event per CPU and thread, into the same buffers
};

struct PerfEngineOptions {
  CollectionTarget target;
  std::optional<uint64_t> mmap_pages;  // per buffer; chosen from the locked-memory budget if unset
  SideBand side_band = SideBand::SamplingEvent;
  size_t backlog_bytes = kDefaultBacklogBytes;  // what collect() may hold for process()
};

class PerfEngine : public LiveEngine {
 public:
  // Opens the events, disabled (a Command target's start with its exec). Throws PerfEventError.
  PerfEngine(const EventSelection& selection, PerfEngineOptions options);
  ~PerfEngine() override;

  // A pass over the ring buffers into the backlog; a TRUNCATED AUX area's events enabled again.
  bool collect() override;
  void process(SamplePipeline& pipeline) override;
  void settle(SamplePipeline& pipeline, uint64_t monotonic_ns) override;
  void finish(SamplePipeline& pipeline) override;
  bool targets_alive() const override;
  EngineCounters counters() const override;
  std::vector<std::string> notes() const override;
  // SPE: the AUX records' flags and the decoder's counts, under "arm_spe".
  void describe(nlohmann::ordered_json& status) const override;

  // The attrs as opened, by attr index (the sampling event first), for diagnostics and tests.
  std::vector<perf_event_attr> opened_attrs() const;

 private:
  // The records ready in time order, through the pipeline.
  void consume_ready(SamplePipeline& pipeline);
  // After a loss: a sample of a process whose mappings may have gone with the lost records
  // (none holds its address) has them read again from /proc first (once per process and loss).
  void resync_if_lost(const SampleRecord& sample, SamplePipeline& pipeline);

  PerfEngineOptions options_;
  DrainBacklog<RecordBatch> backlog_;
  bool spe_ = false;
  size_t spe_aux_pages_ = 0;
  bool finished_ = false;
  // Drain thread's.
  ReaderTotals published_totals_;  // as last published
  uint64_t truncations_seen_ = 0;  // SPE: TRUNCATED AUX records acted on
  std::atomic<uint64_t> spe_restarts_{0};
  // Session thread's: losses seen in the record stream, and the processes read again since.
  uint64_t losses_seen_ = 0;
  bool resyncing_ = false;
  std::unordered_set<uint32_t> resynced_;
  uint64_t resynced_processes_ = 0;
};

}  // namespace profcollect
