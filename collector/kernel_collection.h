// A kernel profile collected live, as a library (the `kernel` command and the daemon's `kernel`
// request drive it): system-wide, kernel-only samples (collector/kernel_event_choice.h) through
// the one collection session and pipeline, with the kernel's own mappings given to it
// (collector/kernel_layout_records.h) and its images chosen by KernelImageSelector.
//
// With a vmlinux of the running kernel (collector/kernel_image_locator.h) the session writes its
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
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collector/collection_session.h"
#include "collector/kallsyms.h"
#include "collector/kernel_image_selector.h"
#include "collector/kernel_layout_records.h"
#include "collector/kernel_event_choice.h"
#include "collector/kernel_image_locator.h"
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
};

struct KernelCollectionResult {
  std::string output_dir;
  std::string profile_dir;  // the kernel's directory under output_dir
  bool symbolized = false;  // a vmlinux gave the profile; else the kallsyms route
  uint64_t samples = 0;     // every kernel sample
  uint64_t module_samples = 0;
  std::vector<KernelFunctionCount> top;  // kallsyms route: the first functions
  bool ok = true;           // every file written
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
  // Stops the events, writes every profile and says where.
  KernelCollectionResult finish();

  const EventSelection& event() const { return session_->event(); }

 private:
  bool write_kallsyms_profile(KernelCollectionResult& result);

  KernelCollectionSettings settings_;
  SessionLogger& logger_;
  KernelImage image_;
  KallsymsTable kallsyms_;
  std::vector<LoadedModule> modules_;
  std::unique_ptr<KernelLayoutRecords> layout_;
  std::shared_ptr<KernelImageSelector> selector_;
  std::unique_ptr<CollectionSession> session_;
};

}  // namespace profcollect
