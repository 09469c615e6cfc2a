#include "output/image_counts.h"

#include <algorithm>

namespace profcollect {

void ImageCounts::add(const ImageCounts& more) {
  ips.merge(more.ips);
  no_lbr.bolted_collection |= more.no_lbr.bolted_collection;
  for (const std::string& e : more.no_lbr.events) {
    if (std::find(no_lbr.events.begin(), no_lbr.events.end(), e) == no_lbr.events.end())
      no_lbr.events.push_back(e);
  }
  for (const auto& [key, count] : more.no_lbr.counts) no_lbr.counts[key] += count;
  if (more.branches) {
    if (!branches) branches.emplace();
    branches->merge(*more.branches);
  }
}

}  // namespace profcollect
