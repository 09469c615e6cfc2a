// An engine that replays a recording (perf.data or perf script text) into a collection
// session, as if its records had come from ring buffers: the same session, pipeline, store
// and renderer as live collection, on input that does not change from run to run.
#pragma once

#include <memory>

#include "collector/pipeline/collection_engine.h"
#include "collector/records/record_source.h"

namespace profcollect {

class ReplayEngine : public CollectionEngine {
 public:
  explicit ReplayEngine(std::unique_ptr<RecordSource> source) : source_(std::move(source)) {}

  void start() override {}
  std::vector<int> descriptors() const override { return {}; }
  // The whole recording at once. Throws SourceError on damage.
  void process(SamplePipeline& pipeline) override;
  void finish(SamplePipeline& pipeline) override { process(pipeline); }
  bool targets_alive() const override { return !ended_; }
  EngineCounters counters() const override { return counters_; }
  // A recording's clock has no known relation to the wall clock here.
  std::optional<int64_t> time_to_epoch() const override { return std::nullopt; }
  std::vector<std::string> event_names() const override;

  const RecordSource& source() const { return *source_; }

 private:
  std::unique_ptr<RecordSource> source_;
  EngineCounters counters_;
  bool ended_ = false;
};

}  // namespace profcollect
