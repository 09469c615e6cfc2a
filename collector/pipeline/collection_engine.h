// What a collection session collects with: perf_event ring buffers (with an SPE AUX area), a
// BPF program's count maps, a recording replayed in tests. An engine is opened by its owner,
// gives the descriptors to wait on, and drains what it has into the one sample pipeline in two
// halves: collect() empties the kernel's buffers into the engine's bounded memory (on a drain
// thread of its own when the engine collects live), process() feeds that through the pipeline
// on the session's thread. Its counters say what it lost on the way, and where.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/pipeline/sample_pipeline.h"

namespace profcollect {

// The drain backlog's limit when none is set. A sample without a branch stack takes about 90
// bytes there (with a 32-entry stack, about 900): at 1 kHz on 64 CPUs that is 11 s of samples
// the session may fall behind by (a long flush) before any is lost; at 4 kHz on 2 CPUs, 90 s.
inline constexpr size_t kDefaultBacklogBytes = size_t{64} << 20;

// Samples lost, by where they were lost.
struct LostSamples {
  uint64_t ring_buffer = 0;     // PERF_RECORD_LOST: the kernel found its ring buffer full
  uint64_t kernel_dropped = 0;  // PERF_RECORD_LOST_SAMPLES: dropped inside the kernel
  uint64_t backlog_full = 0;    // left out by the drain thread: its backlog was full
  uint64_t bpf_map_full = 0;    // the BPF program found its count map full
  uint64_t total() const { return ring_buffer + kernel_dropped + backlog_full + bpf_map_full; }
};

struct EngineCounters {
  uint64_t lost_samples = 0;  // samples the engine knows it lost: lost.total()
  LostSamples lost;
  uint64_t lost_records = 0;        // times records were lost (PERF_RECORD_LOST)
  uint64_t throttles = 0;           // the kernel slowed sampling down
  uint64_t malformed = 0;           // records that did not decode (skipped)
  uint64_t corrupt_buffers = 0;     // reads of a buffer whose control page was impossible
  uint64_t dropped_records = 0;     // side-band records the drain thread left out (backlog full)
  uint64_t resynced_processes = 0;  // processes whose mappings were read again after a loss
  // The drain backlog: what it holds now, the most it held, its limit (bytes).
  uint64_t backlog_bytes = 0, backlog_peak_bytes = 0, backlog_limit_bytes = 0;
};

class CollectionEngine {
 public:
  virtual ~CollectionEngine() = default;

  // Starts collecting (an engine whose target starts on exec is already armed).
  virtual void start() = 0;
  // The descriptors to wait on: readable when the kernel has data to collect().
  virtual std::vector<int> descriptors() const = 0;

  // Whether the engine reads kernel buffers that fill while its owner is busy, so that a drain
  // thread should run collect() (a recording replayed has none).
  virtual bool collects_live() const { return false; }
  // Moves what the kernel holds into the engine's own memory, bounded (its backlog limit): what
  // does not fit is left out and counted in counters(), and collect() never waits for the
  // session. It decodes and resolves nothing and never touches the pipeline: with a drain thread
  // (collector/pipeline/drain_thread.h) it runs there while the session's thread runs process(). True
  // when something new is waiting for process().
  virtual bool collect() { return false; }
  // The descriptors changed since the drain thread last asked (a CPU came online). Drain thread.
  virtual bool descriptors_changed() { return false; }
  // What collect() gathered, through the pipeline (on the session's thread).
  virtual void process(SamplePipeline& pipeline) = 0;
  // Records read so far and stamped at or before `monotonic_ns` (CLOCK_MONOTONIC) go through the
  // pipeline now, though the time order would keep the newest pass's until the next one (perf's
  // round rule): a flush then holds everything that happened before it began. Session thread.
  virtual void settle(SamplePipeline& pipeline, uint64_t monotonic_ns) {}
  // Both, on the caller's thread: an owner without a drain thread.
  void drain(SamplePipeline& pipeline) {
    collect();
    process(pipeline);
  }
  // Stops collecting and drains what is left (on the session's thread, the drain thread ended).
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
  // What happened since the last call that is worth saying (a CPU went offline or came
  // online): collect() queues it, the session's thread takes it.
  virtual std::vector<std::string> take_notes() { return {}; }
  // Adds what is particular to the engine to a status (collection.json, a status request).
  virtual void describe(nlohmann::ordered_json& status) const {}
};

}  // namespace profcollect
