// A kernel profile collected live, as a library (the `kernel` command and the daemon's `kernel`
// request drive it): system-wide, kernel-only samples (collector/kernel/kernel_event_choice.h) through
// the one collection session and pipeline, with the kernel's own mappings given to it
// (collector/kernel/kernel_layout_records.h) and its images chosen by KernelImageSelector.
//
// With a vmlinux of the running kernel (collector/kernel/kernel_image_locator.h) the session writes its
// profiles like any binary's, in OUTPUT/vmlinux-<build-id>/. Without one, finish() writes what
// the running kernel alone allows, in OUTPUT/kernel.kallsyms-<running build-id>/:
//   autofdo.unsym   llvm-profgen's unsymbolized profile (output/unsymbolized_writer.h) of the
//                   kernel image's IP samples, as offsets from the runtime _text (the start of
//                   vmlinux's first executable segment, its preferred base), to be finished
//                   where the vmlinux is: `llvm-profgen --kernel --binary vmlinux
//                   --unsymbolized-profile FILE --leading-ip-only`
//   functions.txt   samples per function by /proc/kallsyms (output/kernel_function_summary.h)
//   meta.json       what the directory holds and how to finish it
// and in OUTPUT/kernel.json the event, the counts, the samples per module and where the profile is.
//
// A cumulative collection (the daemon's `kernel` key) is flushed again and again: its profiles
// add to what earlier runs left in OUTPUT (the vmlinux route through the session's profile store,
// the kallsyms route through output/kallsyms_profile.h), each kernel directory replaced as one
// generation; OUTPUT/collection.json is left to the daemon's own collection.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/session/collection_session.h"
#include "collector/kernel/kallsyms.h"
#include "collector/kernel/kernel_image_selector.h"
#include "collector/kernel/kernel_layout_records.h"
#include "collector/kernel/kernel_event_choice.h"
#include "collector/kernel/kernel_image_locator.h"
#include "output/directory_handle.h"
#include "output/kallsyms_profile.h"
#include "output/kernel_function_summary.h"

namespace profcollect {

struct KernelCollectionSettings {
  KernelImageSettings image;
  std::optional<std::string> modules_dir;
  std::string output_dir;
  // Formats for an image with debug info (vmlinux, .ko); empty: autofdo and unsymbolized.
  std::vector<ProfileFormat> formats;
  KernelEventOptions event;
  std::optional<uint64_t> mmap_pages;
  std::vector<std::string> debug_dirs;
  std::string kallsyms_path = "/proc/kallsyms";
  std::string modules_path = "/proc/modules";
  std::string sys_module = "/sys/module";
  // Flushed repeatedly, adding to what earlier runs left (see above).
  bool cumulative = false;
};

struct KernelCollectionResult {
  std::string output_dir;
  std::string profile_dir;  // the kernel's directory under output_dir
  bool symbolized = false;  // a vmlinux gave the profile; else the kallsyms route
  uint64_t samples = 0;     // every kernel sample
  uint64_t module_samples = 0;
  std::vector<KernelFunctionCount> top;  // kallsyms route: the first functions
  bool ok = true;                        // every file written
  std::string error;                     // else the first reason
};

class KernelCollection {
 public:
  // Chooses the event and the vmlinux, reads the running kernel's layout and opens the events
  // (disabled). Throws SettingError (KernelImageMismatch, EventSelectionError), PerfEventError,
  // OutputError.
  KernelCollection(KernelCollectionSettings settings, SessionLogger& logger);
  ~KernelCollection();

  void start() { session_->start(); }
  std::vector<int> descriptors() const { return session_->descriptors(); }
  void drain() { session_->drain(); }
  // Writes every profile (this run's samples so far, plus earlier runs' when cumulative) and
  // says where; the collection goes on. ok is false when a file could not be written (said).
  KernelCollectionResult flush();
  // Stops the events, writes every profile and says where (the session's files until
  // `deadline`, when given).
  KernelCollectionResult finish(
      std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
  // The directory `directory` of the output directory was removed (the daemon's disk budget):
  // the counts held for it go too, so that later samples start a new profile. Whether it was
  // one of this collection's.
  bool forget(const std::string& directory);

  const EventSelection& event() const { return session_->event(); }
  const PipelineCounts& counts() const { return session_->counts(); }
  // The kernel's directory under the output directory: vmlinux-<build-id> with a vmlinux,
  // else kernel.kallsyms-<running build-id>.
  std::string profile_directory() const;

 private:
  KernelCollectionResult write_profiles();
  void write_kallsyms_profile(KernelCollectionResult& result);
  // The kallsyms route's directory name: kernel.kallsyms-<running build-id>.
  std::string kallsyms_directory() const;
  // What an earlier run left in the kallsyms route's directory (cumulative), read once; a
  // damaged directory's files are set aside, said, and the profile starts again.
  const KallsymsProfile& earlier_kallsyms_profile(const DirectoryHandle& output);

  KernelCollectionSettings settings_;
  SessionLogger& logger_;
  KernelImage image_;
  KallsymsTable kallsyms_;
  std::vector<LoadedModule> modules_;
  std::unique_ptr<KernelLayoutRecords> layout_;
  std::shared_ptr<KernelImageSelector> selector_;
  std::unique_ptr<CollectionSession> session_;
  std::optional<KallsymsProfile> earlier_;
  // Kernel addresses' counts when the kallsyms directory was last forgotten: not written again.
  std::unordered_map<uint64_t, uint64_t> forgotten_;
  uint64_t first_sample_ns_ = 0, last_sample_ns_ = 0, samples_at_last_write_ = 0;
};

}  // namespace profcollect
