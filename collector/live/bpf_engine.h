// The BPF engine: the sampling event's overflows go to a BPF program (bpf/sample_counter.bpf.c)
// that counts them in the kernel by (tgid, ip), instead of the kernel writing every sample into a
// ring buffer for user space to decode. User space drains the counts once per drain interval
// (two generations of maps, swapped; nothing lost or counted twice) and attributes them through
// the one sample pipeline (collector/pipeline/interval_attribution.h): the side-band records (COMM,
// FORK/EXIT, MMAP2) still come from a dummy event's ring buffers, and a count whose address
// changed mapping within its interval is counted ambiguous, never guessed.
//
// Why counts: instruction pointers repeat. Measured system-wide at 1 kHz (docs/usage.md, "The BPF
// engine"), the distinct (tgid, ip) keys of an interval are about a third of its samples, so a
// drain moves a third of the entries a ring buffer would and decodes nothing.
//
// Targets: a command's and --pid's threads through per-thread events (enable_on_exec starts a
// command's at its exec, inherit follows children from their first instruction), as the perf
// engine does; system-wide through one event per CPU, counting every process. With
// per_cpu_targets, --pid too uses one event per CPU and the program counts only the target
// processes (a map kept current from the FORK and EXIT records: a child of a target is added when
// its FORK is read, so its samples before that are counted as filtered).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "collector/live/live_engine.h"
#include "bpf/sample_counter.h"
#include "collector/pipeline/collection_target.h"
#include "collector/live/drain_backlog.h"
#include "collector/live/record_batch.h"
#include "collector/live/event_selection.h"
#include "collector/pipeline/interval_attribution.h"

namespace profcollect {

struct BpfEngineOptions {
  CollectionTarget target;
  std::optional<uint64_t> mmap_pages;  // side-band buffers; from the locked-memory budget if unset
  std::chrono::milliseconds drain_interval{250};
  // Processes: one event per CPU filtered by the program (fewer events for many threads), at
  // the price of a new child's first samples; otherwise one inherited event per thread and CPU.
  bool per_cpu_targets = false;
  size_t backlog_bytes = kDefaultBacklogBytes;  // what collect() may hold for process()
};

class BpfEngine : public LiveEngine {
 public:
  // Opens the events (disabled) and loads the program. Throws PerfEventError for the events,
  // BpfError when the kernel refuses the program or its maps, EventSelectionError for an event
  // the engine cannot count (any branch stack: it counts instruction pointers only).
  BpfEngine(const EventSelection& selection, BpfEngineOptions options);
  ~BpfEngine() override;

  void start() override;
  // The side-band buffers into the backlog; once a drain interval has passed, the count maps
  // too (flipped, the retired generation read into the backlog).
  bool collect() override;
  // Side-band records through the attribution; the counts of each closed interval too.
  void process(SamplePipeline& pipeline) override;
  void finish(SamplePipeline& pipeline) override;
  bool targets_alive() const override;
  EngineCounters counters() const override;
  std::vector<std::string> notes() const override { return notes_; }
  // status "bpf": the counters below.
  void describe(nlohmann::ordered_json& status) const override;

  // Counts of this engine's own, for status and tests.
  struct BpfCounters {
    uint64_t drains = 0;               // intervals closed
    uint64_t entries = 0;              // (tgid, ip) entries drained
    uint64_t counted = 0;              // samples in them
    uint64_t ambiguous = 0;            // of which, ambiguous (not attributed)
    uint64_t not_stored = 0;           // samples the program could not store (full map)
    uint64_t filtered = 0;             // runs for processes outside the targets
    uint64_t other_pid_namespace = 0;  // runs for processes outside this one's pid namespace
    uint64_t run_time_ns = 0;          // the program's own run time (kernel.bpf_stats_enabled)
    uint64_t run_count = 0;
    uint64_t map_bytes = 0;  // the maps' kernel memory
  };
  BpfCounters bpf_counters() const;

 private:
  // What collect() hands over: side-band records, and with the pass after a flip, the counts
  // of the interval that ended at `interval_end`.
  struct Batch {
    RecordBatch records;
    bool closes_interval = false;
    uint64_t interval_end = 0;
    DrainedCounts counts;
    size_t memory_bytes() const;
    size_t capacity_bytes() const;
    void clear();
  };
  bool collect_pass(bool close_interval);
  void consume_ready(SamplePipeline& pipeline);
  void attribute(SamplePipeline& pipeline, const Batch& batch);
  void follow_targets(const Record& r);

  BpfEngineOptions options_;
  bool per_cpu_filtered_ = false;  // per-CPU events counting the target set only
  std::vector<std::string> notes_;
  std::unique_ptr<SampleCounter> counter_;
  std::unique_ptr<DrainBacklog<Batch>> backlog_;
  IntervalAttribution attribution_;
  std::unordered_set<uint32_t> targets_;
  bool finished_ = false;
  // Drain thread's.
  std::chrono::steady_clock::time_point last_drain_{};
  ReaderTotals published_totals_;
  std::atomic<uint64_t> counts_dropped_{0};  // samples of intervals the backlog had no room for
  // Session thread's.
  uint64_t drains_ = 0, entries_ = 0, counted_ = 0;
};

}  // namespace profcollect
