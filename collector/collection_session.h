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
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/collection_engine.h"
#include "collector/collection_target.h"
#include "collector/event_selection.h"
#include "collector/mapped_image_selector.h"
#include "collector/sample_pipeline.h"
#include "output/profile_renderer.h"

namespace profcollect {

class ProfileStore;

struct SessionSettings {
  CollectionTarget target;      // Command: the pid of a child that has not exec'd yet
  std::string command_path;     // Command: the program it will exec
  std::string event = "auto";   // auto, lbr, brs, cycles, cpu-clock, rHEX[:mods]
  std::string engine = "perf";  // perf, bpf, auto (collector/engine_choice.h)
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
  bool unsymbolized = false;          // also write autofdo.unsym per binary
  // While a flush writes binaries, the engine empties the kernel's buffers into its own memory
  // (CollectionEngine::absorb) between two binaries once this much time has passed since it last
  // did: a flush of many binaries outlasts what a ring buffer holds at a high sample rate.
  std::chrono::milliseconds absorb_interval{10};
  // A kernel profile (collector/kernel_collection.h): the event chosen beforehand, the images
  // chosen by this selector instead of by `binaries`, and the runtime addresses of kernel
  // samples no image took kept (SamplePipeline::kernel_addresses).
  std::optional<EventSelection> selection;
  std::shared_ptr<ImageSelector> selector;
  bool kernel_addresses = false;
  // The formats rendered per image; empty: BOLT (fdata, pre-aggregated), AutoFDO, and the
  // unsymbolized profile when `unsymbolized`.
  std::vector<ProfileFormat> formats;
  // The collection summary's name in the output directory; empty: none (a kernel profile kept
  // beside the daemon's collection writes its own kernel.json, and collection.json is the
  // daemon's).
  std::string summary_file = "collection.json";
};

class SessionLogger {
 public:
  virtual ~SessionLogger() = default;
  virtual void note(const std::string& message) = 0;
  virtual void warning(const std::string& message) = 0;
  virtual void error(const std::string& message) = 0;
};

class CollectionSession {
 public:
  // Chooses the event, creates the output directory and opens the engine: the settings' engine
  // (collector/engine_choice.h) for their event and target, disabled (a Command target's start
  // with its exec), or the engine given. Throws EventSelectionError, PerfEventError,
  // OutputError, SettingError (an engine refused).
  CollectionSession(SessionSettings settings, SessionLogger& logger,
                    std::unique_ptr<CollectionEngine> engine = nullptr);
  ~CollectionSession();

  // Starts the engine (for perf events: enables them and reads the existing processes of a
  // Processes or SystemWide target).
  void start();
  // The descriptors to wait on for readable data.
  std::vector<int> descriptors() const;
  // Reads what the ring buffers hold through the pipeline.
  void drain();
  // False once there is nothing left to collect from: every target process has exited (never
  // system-wide, nor for a command, whose end its owner sees), or a replay has ended.
  bool targets_alive() const;
  // Writes every profile and collection.json. False (and said) if writing failed: what is in
  // memory is kept, and the next flush writes it all.
  bool flush();
  // The binary's directory `directory` was removed from the output directory (the daemon's disk
  // budget): its counts in memory go too, or the next flush would write them back; its later
  // samples start a new profile. Whether the session held counts of it.
  bool drop_binary(const std::string& directory);
  // Stops the engine, reads what is left and flushes for the last time.
  bool stop();
  // Called between two binaries of a flush, at most every absorb_interval: a flush of many
  // binaries takes seconds, and an owner with a watchdog says meanwhile that it is alive.
  void set_flush_progress(std::function<void()> progress) { flush_progress_ = std::move(progress); }

  nlohmann::ordered_json status() const;
  // This run's samples per profiled binary (a daemon's status request lists them).
  struct BinaryCount {
    std::string path;
    std::string directory;  // its directory under the output directory
    uint64_t samples = 0;
  };
  std::vector<BinaryCount> binary_counts() const;
  const EventSelection& event() const { return selection_; }
  // A record that no engine reports, before the first sample (the kernel's own mappings).
  void consume(const Record& record) { pipeline_->consume(record); }
  const SamplePipeline& pipeline() const { return *pipeline_; }
  const PipelineCounts& counts() const { return pipeline_->counts(); }
  size_t profiled_images() const { return pipeline_->profiled_slots().size(); }

 private:

  void report_failure(const std::string& what);
  // engine_->absorb() when absorb_interval has passed since `last`.
  void absorb_if_due(std::chrono::steady_clock::time_point& last);

  SessionSettings settings_;
  SessionLogger& logger_;
  std::vector<std::string> failures_said_;
  EventSelection selection_;
  std::unique_ptr<ProfileStore> store_;
  MappedImageSelector* mapped_selector_ = nullptr;  // unless the settings give a selector
  std::shared_ptr<ImageSelector> selector_;
  std::unique_ptr<SamplePipeline> pipeline_;
  std::unique_ptr<CollectionEngine> engine_;
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
};

}  // namespace profcollect
