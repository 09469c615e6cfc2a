// The vmlinux of the running kernel: the one given, or the first found in the places
// distributions put it (kernel_image_candidates), and only if its build-id is the running
// kernel's (/sys/kernel/notes, collector/kernel/kernel_notes.h). A given vmlinux that does not match is
// refused with both build-ids; a found one that does not match is passed over, and said. Every
// path is a setting, so tests give their own vmlinux and notes file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collector/kernel/kernel_notes.h"
#include "collector/host/setting_error.h"
#include "record/build_id.h"

namespace profcollect {

struct KernelImageSettings {
  std::optional<std::string> vmlinux;  // given: used or refused, never searched past
  std::string notes_path = kRunningKernelNotes;
  std::string release;                  // `uname -r`; empty: this machine's
  std::vector<std::string> candidates;  // empty: kernel_image_candidates(release)
};

// A given vmlinux whose build-id is not the running kernel's.
class KernelImageMismatch : public SettingError {
 public:
  explicit KernelImageMismatch(const std::string& message) : SettingError(message) {}
};

struct KernelImage {
  std::string path;                // empty: none usable
  BuildId build_id;                // the vmlinux's
  std::optional<BuildId> running;  // the running kernel's, when the notes file gives it
  std::vector<std::string> notes;  // what was looked at and why each was passed over
};

// /usr/lib/debug/boot/vmlinux-R, /lib/modules/R/build/vmlinux, /boot/vmlinux-R, in that order.
std::vector<std::string> kernel_image_candidates(const std::string& release);

// This machine's kernel release (uname -r).
std::string running_kernel_release();

// Throws KernelImageMismatch for a given vmlinux of another build-id, SettingError for a given
// one that is missing or not an ELF file.
KernelImage locate_kernel_image(const KernelImageSettings& settings);

}  // namespace profcollect
