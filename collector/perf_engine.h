// The perf_event engine: one sampling event per CPU or per thread (cycles, cpu-clock, a raw
// event, LBR, BRS), each with its ring buffer, and optionally a side-band dummy event that
// carries only the task and mmap records. Decoded by LiveRecordSource, in time order.
#pragma once

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

struct PerfEngineOptions {
  CollectionTarget target;
  std::optional<uint64_t> mmap_pages;  // per buffer; chosen from the locked-memory budget if unset
};

class PerfEngine : public CollectionEngine {
 public:
  // Opens the events, disabled (a Command target's start with its exec). Throws PerfEventError.
  PerfEngine(const EventSelection& selection, PerfEngineOptions options);
  ~PerfEngine() override;

  void start() override;
  std::vector<int> descriptors() const override;
  void drain(SamplePipeline& pipeline) override;
  void finish(SamplePipeline& pipeline) override;
  bool targets_alive() const override;
  EngineCounters counters() const override;
  std::optional<int64_t> time_to_epoch() const override { return time_to_epoch_; }
  std::vector<std::string> event_names() const override { return {event_name_}; }
  std::vector<std::string> notes() const override;

 private:
  void resync_after_loss();

  PerfEngineOptions options_;
  std::string event_name_;
  std::unique_ptr<PerfEventSet> events_;
  std::unique_ptr<LiveRecordSource> source_;
  int64_t time_to_epoch_ = 0;
  uint64_t lost_records_seen_ = 0;
  std::chrono::steady_clock::time_point last_resync_{};
};

}  // namespace profcollect
