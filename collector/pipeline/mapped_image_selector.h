// The selector of live collection: the binaries a selection names (every one, or by path or
// build-id), each opened the way its process mapped it (collector/pipeline/mapped_binary_opener.h). A
// file that cannot be opened, or is not the file that was mapped, is told apart from a file
// whose build-id differs from the one the MMAP2 record carried.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "mapper/image_resolver.h"
#include "record/build_id.h"

namespace profcollect {

// Which binaries get profiles: every one, or those named by path, build-id or a regular
// expression on the path; never one whose path an exclusion matches.
struct BinarySelection {
  bool all = false;
  std::vector<std::string> paths;  // compared with the path the MMAP2 record reports
  std::vector<BuildId> build_ids;
  std::vector<std::regex> patterns;  // searched for in the path the MMAP2 record reports
  std::vector<std::regex> exclude;   // likewise; a match leaves the binary out
  bool selects(const Dso& dso) const;
};

class MappedImageSelector : public ImageSelector {
 public:
  MappedImageSelector(BinarySelection selection, ImageLoadOptions load_options = {})
      : selection_(std::move(selection)), load_options_(std::move(load_options)) {}

  ImageChoice choose(uint32_t pid, const Mapping& mapping, const Dso& dso) override;

  // Whether a profile was made for a mapping of this path (as the selection holds it) or this
  // build-id, so that a binary that was named but never mapped can be said at the end.
  bool matched_path(const std::string& path) const;
  bool matched_build_id(const BuildId& id) const;

 private:
  BinarySelection selection_;
  std::vector<std::string> matched_paths_;
  std::vector<BuildId> matched_build_ids_;
  ImageLoadOptions load_options_;
};

}  // namespace profcollect
