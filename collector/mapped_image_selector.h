// The selector of live collection: the binaries a selection names (every one, or by path or
// build-id), each opened the way its process mapped it (collector/mapped_binary_opener.h). A
// file that cannot be opened, or is not the file that was mapped, is told apart from a file
// whose build-id differs from the one the MMAP2 record carried.
#pragma once

#include <string>
#include <vector>

#include "mapper/image_resolver.h"
#include "record/build_id.h"

namespace profcollect {

// Which binaries get profiles: every one, or those named by path or build-id.
struct BinarySelection {
  bool all = false;
  std::vector<std::string> paths;  // compared with the path the MMAP2 record reports
  std::vector<BuildId> build_ids;
  bool selects(const Dso& dso) const;
};

class MappedImageSelector : public ImageSelector {
 public:
  MappedImageSelector(BinarySelection selection, ImageLoadOptions load_options = {})
      : selection_(std::move(selection)), load_options_(std::move(load_options)) {}

  ImageChoice choose(uint32_t pid, const Mapping& mapping, const Dso& dso) override;

 private:
  BinarySelection selection_;
  ImageLoadOptions load_options_;
};

}  // namespace profcollect
