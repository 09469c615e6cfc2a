// Decides which mapped files are the target binary. By build-id when both sides have one (from
// the MMAP2 record or the recording's build-id table), else by path or file name, as perf2bolt
// picks a binary out of a perf.data. A file of the binary's name with another build-id is a
// mismatch unless the user said to ignore build-ids.
//
// A target of another kind matches only mappings of its kind: a kernel image the recording's
// kernel mapping (its build-id listed as "[kernel.kallsyms]"; without build-ids it is taken,
// since the user named it), a kernel module the module mapping of its name ("fuse.ko",
// "[fuse]").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "record/build_id.h"
#include "mapper/image_kind.h"
#include "mapper/process_table.h"

namespace profcollect {

enum class DsoMatch : uint8_t { Unknown, Target, Other, BuildIdMismatch, Kernel, Anon };

class BinaryMatcher {
 public:
  // recorded_build_id: the build-id the recording lists for a path (nullptr if none).
  using BuildIdLookup = std::function<const BuildId*(std::string_view path)>;

  BinaryMatcher(std::string target_path, BuildId target_build_id, bool ignore_build_id,
                BuildIdLookup recorded_build_id, ImageKind target_kind = ImageKind::UserFile);

  // by_build_id (if given) tells whether build-ids decided; otherwise the name did, and a
  // build-id the recording gives later may change the answer.
  DsoMatch match(const Dso& dso, bool* by_build_id = nullptr) const;

  // The build-id this matcher took as the recorded one for the last path it matched by name
  // (for messages).
  const std::string& target_path() const { return target_path_; }
  const BuildId& target_build_id() const { return target_build_id_; }

 private:
  bool name_matches(const Dso& dso) const;

  std::string target_path_, target_basename_, target_realpath_;
  BuildId target_build_id_;
  bool ignore_build_id_;
  BuildIdLookup recorded_build_id_;
  ImageKind target_kind_;
};

}  // namespace profcollect
