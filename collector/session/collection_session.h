// A live collection as a library: perf events and their ring buffers (the engine), the one
// sample pipeline, and the profile store it flushes into. It owns no event loop, no signals
// and no terminal: its owner (the CLI, the daemon) waits on descriptors() and calls drain()
// when one is readable and at least every poll interval, flush() every flush interval, and
// stop() at the end; status() gives the numbers a status request or collection.json shows.
// What the session has to say goes to a SessionLogger. Errors speak of settings (event,
// period, binaries), not of command-line flags.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/pipeline/collection_engine.h"
#include "collector/pipeline/collection_target.h"
#include "collector/pipeline/drain_thread.h"
#include "collector/live/event_selection.h"
#include "collector/pipeline/mapped_image_selector.h"
#include "collector/pipeline/sample_pipeline.h"
#include "mapper/dwarf_symbolizer.h"
#include "output/profile_renderer.h"

namespace profcollect {

class ProfileStore;

struct SessionSettings {
  CollectionTarget target;      // Command: the pid of a child that has not exec'd yet
  std::string command_path;     // Command: the program it will exec
  std::string event = "auto";   // auto, lbr, brs, cycles, cpu-clock, rHEX[:mods]
  std::string engine = "perf";  // perf, bpf, auto (collector/live/engine_choice.h)
  bool branch_any = false;      // ask every taken branch (a branch stack)
  std::string branch_filter;    // any[,u][,k]
  std::optional<uint64_t> frequency;
  std::optional<uint64_t> period;
  std::optional<uint64_t> mmap_pages;
  std::string output_dir = "profcollect.out";
  std::vector<std::string> binaries;  // paths or build-ids; empty: the target's own
  // Regular expressions (ECMAScript) searched for in mapped paths: they select binaries too
  // (with none of them nor of `binaries`, the target's own); an `exclude` match leaves one out.
  std::vector<std::string> binary_patterns;
  std::vector<std::string> exclude_patterns;
  std::vector<std::string> debug_dirs;
  bool unsymbolized = false;  // also write autofdo.unsym per binary
  // A live engine's buffers are emptied by a drain thread of the session's (drain_thread.h), so
  // that a flush of many binaries, which outlasts what a ring buffer holds, loses nothing; what
  // it has read waits for the session in a backlog of at most `backlog_bytes`. Without the
  // thread (tests that drive an engine step by step), drain() does both halves.
  bool drain_thread = true;
  size_t backlog_bytes = kDefaultBacklogBytes;
  // A kernel profile (collector/kernel/kernel_collection.h): the event chosen beforehand, the images
  // chosen by this selector instead of by `binaries`, and the runtime addresses of kernel
  // samples no image took kept (SamplePipeline::kernel_addresses).
  std::optional<EventSelection> selection;
  std::shared_ptr<ImageSelector> selector;
  bool kernel_addresses = false;
  // The formats rendered per image (output/profile_format.h); empty: those live collection writes
  // by default (BOLT's fdata and pre-aggregated, AutoFDO), and the unsymbolized profile when
  // `unsymbolized`.
  std::vector<ProfileFormat> formats;
  // The collection summary's name in the output directory; empty: none (a kernel profile kept
  // beside the daemon's collection writes its own kernel.json, and collection.json is the
  // daemon's).
  std::string summary_file = "collection.json";
  // stop() says the summary line (samples, profiled binaries, where the profiles are); a kernel
  // profile says its own.
  bool summary_line = true;
};

// A binary a flush could not write, and why.
struct FlushFailure {
  std::string binary;     // its path; empty for the collection summary
  std::string directory;  // its directory under the output directory (or the summary's name)
  std::string reason;
};

// What a flush did.
struct FlushReport {
  bool ok = true;          // everything it tried was written
  bool cut_short = false;  // its deadline came first: `pending` binaries keep their last flush
  size_t written = 0;      // binaries written
  size_t pending = 0;      // binaries with counts not written (cut short)
  uint64_t unix_ns = 0;    // when it began (Unix epoch)
  double seconds = 0;      // how long it took
  std::vector<FlushFailure> failures;
  // The entries of the output directory it wrote to (or tried to): binary directories and the
  // summary file.
  std::vector<std::string> touched;
};

class SessionLogger {
 public:
  virtual ~SessionLogger() = default;
  virtual void note(const std::string& message) = 0;
  virtual void warning(const std::string& message) = 0;
  virtual void error(const std::string& message) = 0;
};

// A session's numbers: the event it samples, what it took in, lost and could not map.
struct SessionStatus {
  std::string event;
  std::string engine;                  // what `auto` chose
  std::string event_choice;            // why this event
  std::string branch_hardware_probed;  // empty: nothing probed
  bool by_frequency = true;
  uint64_t rate = 0;  // Hz, or the period
  uint64_t samples = 0;
  std::optional<uint64_t> own_samples;    // system-wide: profcollect's own, left out
  std::optional<uint64_t> branch_stacks;  // events that record them
  EngineCounters counters;
  uint64_t mapped = 0;
  std::vector<std::pair<std::string, uint64_t>> unmapped;  // by reason, in the outcomes' order
  size_t binaries = 0;
  nlohmann::ordered_json image_warnings;  // by kind: count and binaries; null when none
  nlohmann::ordered_json engine_details;  // what the engine adds (its own object keys)
  // What making AutoFDO profiles read of DWARF: over the run, and at the last flush (a flush
  // symbolizes only the addresses earlier flushes had not met).
  DwarfSymbolizer::Counts symbolization, last_flush_symbolization;
  uint64_t start_ns = 0, end_ns = 0;  // CLOCK_REALTIME
};

nlohmann::ordered_json to_json(const SessionStatus& status);

class CollectionSession {
 public:
  // Chooses the event, creates the output directory and opens the engine: the settings' engine
  // (collector/live/engine_choice.h) for their event and target, disabled (a Command target's start
  // with its exec), or the engine given. Throws EventSelectionError, PerfEventError,
  // OutputError, SettingError (an engine refused).
  CollectionSession(SessionSettings settings, SessionLogger& logger,
                    std::unique_ptr<CollectionEngine> engine = nullptr);
  ~CollectionSession();

  // Starts the engine (for perf events: enables them and reads the existing processes of a
  // Processes or SystemWide target) and, for a live engine, the drain thread.
  void start();
  // The descriptors to wait on for readable data: the drain thread's ready_fd(), or without
  // one the engine's.
  std::vector<int> descriptors() const;
  // What the drain thread read (or, without one, what the ring buffers hold) through the
  // pipeline. Throws what the drain thread met (a BPF map that cannot be read).
  void drain();
  // False once there is nothing left to collect from: every target process has exited (never
  // system-wide, nor for a command, whose end its owner sees), or a replay has ended.
  bool targets_alive() const;
  // Writes every profile and collection.json. False (and said) if writing failed: what is in
  // memory is kept, and the next flush writes it all.
  bool flush() { return flush_until(std::nullopt).ok; }
  // The same, giving up at `deadline` (or when the interrupt says so): between two binaries, or
  // part way through rendering one (a binary with much debug info takes seconds). Those not
  // written keep what the last flush wrote (each binary's files are replaced whole, so the
  // directory stays consistent), and the report says the flush was cut short.
  const FlushReport& flush_until(std::optional<std::chrono::steady_clock::time_point> deadline);
  // The last flush's report (none before the first).
  const std::optional<FlushReport>& last_flush() const { return last_flush_; }
  // The binary's directory `directory` was removed from the output directory (the daemon's disk
  // budget): its counts in memory go too, or the next flush would write them back; its later
  // samples start a new profile. Whether the session held counts of it.
  bool drop_binary(const std::string& directory);
  // Stops the engine, reads what is left and flushes for the last time (until `deadline`, when
  // given: a service told to stop has seconds, not minutes). Says the summary: samples, binaries,
  // losses, and where the profiles are (only when they were all written).
  bool stop(std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
  // Called between two binaries of a flush: a flush of many binaries takes seconds, and an owner
  // with a watchdog says meanwhile that it is alive.
  void set_flush_progress(std::function<void()> progress) { flush_progress_ = std::move(progress); }
  // Asked during every flush: true cuts it short as a deadline would (a daemon told to stop
  // while it flushes stops at once and begins its final flush).
  void set_flush_interrupt(std::function<bool()> interrupt) {
    flush_interrupt_ = std::move(interrupt);
  }

  // What the session has done so far, typed; status_json() is its JSON (collection.json, a
  // daemon's status request).
  SessionStatus status() const;
  nlohmann::ordered_json status_json() const { return to_json(status()); }
  // This run's samples per profiled binary (a daemon's status request lists them).
  struct BinaryCount {
    std::string path;
    std::string directory;  // its directory under the output directory
    uint64_t samples = 0;
  };
  std::vector<BinaryCount> binary_counts() const;
  const EventSelection& event() const { return selection_; }
  // Lost samples by reason, the drain backlog and the engine's other counts.
  EngineCounters engine_counters() const { return engine_->counters(); }
  // A record that no engine reports, before the first sample (the kernel's own mappings).
  void consume(const Record& record) { pipeline_->consume(record); }
  const SamplePipeline& pipeline() const { return *pipeline_; }
  const PipelineCounts& counts() const { return pipeline_->counts(); }
  size_t profiled_images() const { return pipeline_->profiled_slots().size(); }

 private:
  void report_failure(const std::string& what);
  // The image warnings the pipeline gathered, grouped by kind and said in one short line per
  // kind; the binaries are listed in the summary (collection.json).
  void gather_image_warnings();

  SessionSettings settings_;
  SessionLogger& logger_;
  std::vector<std::string> failures_said_;
  EventSelection selection_;
  std::unique_ptr<ProfileStore> store_;
  MappedImageSelector* mapped_selector_ = nullptr;  // unless the settings give a selector
  std::shared_ptr<ImageSelector> selector_;
  std::unique_ptr<SamplePipeline> pipeline_;
  std::unique_ptr<CollectionEngine> engine_;
  std::unique_ptr<DrainThread> drain_thread_;
  std::string engine_name_ = "perf";
  RenderRequest render_;
  // Per image directory, the profile revision its files hold, and the events they name: an
  // image with nothing new since is not rendered again (a long-lived image that no longer runs
  // costs nothing at a flush).
  std::unordered_map<std::string, uint64_t> written_;
  std::vector<std::string> written_events_;
  uint64_t start_ns_ = 0;
  bool stopped_ = false;
  std::function<void()> flush_progress_;
  std::function<bool()> flush_interrupt_;
  std::optional<FlushReport> last_flush_;
  // Per kind of image warning: how many binaries, and (the first kMaxListedWarnings) which.
  struct WarningGroup {
    uint64_t count = 0;
    std::vector<ImageWarning> listed;
  };
  std::map<std::string, WarningGroup> image_warnings_;
  DwarfSymbolizer::Counts symbolization_, last_flush_symbolization_;
};

}  // namespace profcollect
