// What a collection session collects with: perf_event ring buffers today, a BPF program or an
// SPE AUX area next, a recording replayed in tests. An engine is opened by its owner, gives
// the descriptors to wait on, and drains what it has into the one sample pipeline. Its
// counters say what it lost on the way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/sample_pipeline.h"

namespace profcollect {

struct EngineCounters {
  uint64_t lost_samples = 0;     // samples the engine knows it lost (buffer full, dropped in the kernel)
  uint64_t lost_records = 0;     // times records were lost (PERF_RECORD_LOST)
  uint64_t throttles = 0;        // the kernel slowed sampling down
  uint64_t malformed = 0;        // records that did not decode (skipped)
  uint64_t corrupt_buffers = 0;  // reads of a buffer whose control page was impossible
};

class CollectionEngine {
 public:
  virtual ~CollectionEngine() = default;

  // Starts collecting (an engine whose target starts on exec is already armed).
  virtual void start() = 0;
  virtual std::vector<int> descriptors() const = 0;
  // Everything ready, through the pipeline.
  virtual void drain(SamplePipeline& pipeline) = 0;
  // Moves what the kernel holds into the engine's own memory without processing it; the next
  // drain() processes it. The owner calls it while it is busy elsewhere (a flush writing many
  // binaries can take seconds, and a kernel buffer left unread that long overflows and loses
  // samples). It must not touch the pipeline: the owner may be in the middle of reading it.
  virtual void absorb() {}
  // Stops collecting and drains what is left.
  virtual void finish(SamplePipeline& pipeline) = 0;
  // False once there is nothing left to collect from (every target process exited, the
  // recording ended).
  virtual bool targets_alive() const = 0;
  virtual EngineCounters counters() const = 0;
  // Sample times plus this are Unix-epoch nanoseconds; nullopt when the clock is unknown.
  virtual std::optional<int64_t> time_to_epoch() const = 0;
  // The name of each event, by the attr index samples carry ("cpu-clock", "cycles:u").
  virtual std::vector<std::string> event_names() const = 0;
  // What the engine chose and could not do, said once when it opens.
  virtual std::vector<std::string> notes() const { return {}; }
  // Adds what is particular to the engine to a status (collection.json, a status request).
  virtual void describe(nlohmann::ordered_json& status) const {}
};

}  // namespace profcollect
