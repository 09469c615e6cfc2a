// The selector of convert and report: one target binary, already opened, picked out of a
// recording as perf2bolt picks it (mapper/binary_matcher.h): by build-id when both sides have
// one, else by name. A match by name while the recording may still give the file's build-id
// (pipe mode: the build-id table comes last) is provisional until the input is settled. A
// kernel image (vmlinux) or module (.ko) as the target is matched to the kernel's own mappings
// the same way (BinaryMatcher).
#pragma once

#include <memory>

#include "mapper/binary_matcher.h"
#include "mapper/image_resolver.h"

namespace profcollect {

class TargetImageSelector : public ImageSelector {
 public:
  TargetImageSelector(std::shared_ptr<LoadedImage> target, bool ignore_build_id,
                      BinaryMatcher::BuildIdLookup recorded_build_id);

  ImageChoice choose(uint32_t pid, const Mapping& mapping, const Dso& dso) override;
  void settle() override { settled_ = true; }

  const LoadedImage& target() const { return *target_; }
  // How the target was last matched: by file name only (no build-id on the recorded side).
  bool matched_by_name() const { return matched_by_name_; }
  // The first file of the target's name whose build-id differed, as recorded (for messages).
  const std::string& mismatched_path() const { return mismatched_path_; }
  const BuildId& mismatched_build_id() const { return mismatched_build_id_; }

 private:
  std::shared_ptr<LoadedImage> target_;
  BinaryMatcher::BuildIdLookup recorded_build_id_;
  BinaryMatcher matcher_;
  bool settled_ = false;
  bool matched_by_name_ = false;
  std::string mismatched_path_;
  BuildId mismatched_build_id_;
};

// Selects nothing: every sample is counted by its outcome only (report without a binary).
class NoImageSelector : public ImageSelector {
 public:
  ImageChoice choose(uint32_t, const Mapping&, const Dso&) override { return {}; }
};

}  // namespace profcollect
