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

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collector/collection_engine.h"
#include "collector/collection_target.h"
#include "collector/event_selection.h"

namespace profcollect {

class LiveRecordSource;
class PerfEventSet;

// What carries the side-band records (COMM, FORK/EXIT, MMAP2).
enum class SideBand {
  SamplingEvent,  // the sampling event's own mmap/comm/task bits
  DummyEvent,     // a PERF_COUNT_SW_DUMMY event per CPU and thread, into the same buffers
};

struct PerfEngineOptions {
  CollectionTarget target;
  std::optional<uint64_t> mmap_pages;  // per buffer; chosen from the locked-memory budget if unset
  SideBand side_band = SideBand::SamplingEvent;
};

class PerfEngine : public CollectionEngine {
 public:
  // Opens the events, disabled (a Command target's start with its exec). Throws PerfEventError.
  PerfEngine(const EventSelection& selection, PerfEngineOptions options);
  ~PerfEngine() override;

  void start() override;
  std::vector<int> descriptors() const override;
  void drain(SamplePipeline& pipeline) override;
  // The ring buffers' records copied into the source's time-ordering queue.
  void absorb() override;
  void finish(SamplePipeline& pipeline) override;
  bool targets_alive() const override;
  EngineCounters counters() const override;
  // None for SPE: its samples are on perf's clock (see the constructor).
  std::optional<int64_t> time_to_epoch() const override { return time_to_epoch_; }
  std::vector<std::string> event_names() const override { return event_names_; }
  std::vector<std::string> notes() const override;
  // SPE: the AUX records' flags and the decoder's counts, under "arm_spe".
  void describe(nlohmann::ordered_json& status) const override;

  // The attrs as opened, by attr index (the sampling event first), for diagnostics and tests.
  std::vector<perf_event_attr> opened_attrs() const;

 private:
  void resync_after_loss();
  void restart_after_truncation();

  PerfEngineOptions options_;
  std::vector<std::string> event_names_;
  std::unique_ptr<PerfEventSet> events_;
  std::unique_ptr<LiveRecordSource> source_;
  bool spe_ = false;
  std::optional<int64_t> time_to_epoch_;
  bool finished_ = false;
  uint64_t lost_records_seen_ = 0;
  uint64_t truncations_seen_ = 0;  // SPE: TRUNCATED AUX records acted on
  uint64_t spe_restarts_ = 0;
  std::chrono::steady_clock::time_point last_resync_{};
};

}  // namespace profcollect
