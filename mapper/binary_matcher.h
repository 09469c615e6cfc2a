// Decides which mapped files are the target binary. By build-id when both sides have one (from
// the MMAP2 record or the recording's build-id table), else by path or file name, as perf2bolt
// picks a binary out of a perf.data. A file of the binary's name with another build-id is a
// mismatch unless the user said to ignore build-ids.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mapper/build_id.h"
#include "mapper/process_table.h"

namespace profcollect {

enum class DsoMatch : uint8_t { Unknown, Target, Other, BuildIdMismatch, Kernel, Anon };

class BinaryMatcher {
 public:
  // recorded_build_id: the build-id the recording lists for a path (nullptr if none).
  using BuildIdLookup = std::function<const BuildId*(std::string_view path)>;

  BinaryMatcher(std::string target_path, BuildId target_build_id, bool ignore_build_id,
                BuildIdLookup recorded_build_id);

  // Cached per Dso index: the first call decides, later ones are a vector lookup.
  DsoMatch match(uint32_t dso_index, const Dso& dso) {
    if (dso_index < cache_.size() && cache_[dso_index] != DsoMatch::Unknown) return cache_[dso_index];
    return decide(dso_index, dso);
  }

  // Forget cached decisions (the recording's build-id table grew).
  void reset() { cache_.clear(); }

  // The build-id this matcher took as the recorded one for the last path it matched by name
  // (for messages).
  const std::string& target_path() const { return target_path_; }
  const BuildId& target_build_id() const { return target_build_id_; }

  static bool is_anon(std::string_view path);

 private:
  DsoMatch decide(uint32_t dso_index, const Dso& dso);
  bool name_matches(std::string_view path) const;

  std::string target_path_, target_basename_, target_realpath_;
  BuildId target_build_id_;
  bool ignore_build_id_;
  BuildIdLookup recorded_build_id_;
  std::vector<DsoMatch> cache_;
};

}  // namespace profcollect
