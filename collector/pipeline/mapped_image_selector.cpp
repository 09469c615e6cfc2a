#include "collector/pipeline/mapped_image_selector.h"

#include <algorithm>

#include "collector/pipeline/mapped_binary_opener.h"

namespace profcollect {

bool BinarySelection::selects(const Dso& dso) const {
  // Asked once per mapped file, not per sample.
  for (const auto& e : exclude) {
    if (std::regex_search(dso.path, e)) return false;
  }
  if (all) return true;
  for (const auto& p : paths) {
    if (dso.path == p) return true;
  }
  for (const auto& p : patterns) {
    if (std::regex_search(dso.path, p)) return true;
  }
  if (!dso.build_id.empty()) {
    for (const auto& id : build_ids) {
      if (id == dso.build_id) return true;
    }
  }
  return false;
}

ImageChoice MappedImageSelector::choose(uint32_t pid, const Mapping& mapping, const Dso& dso) {
  ImageChoice c;
  // Live collection profiles user files; samples in the kernel and its modules are counted as
  // `kernel` (nothing here reads the running kernel's layout yet).
  if (dso.kernel) return c;
  const bool selected = selection_.selects(dso);
  // Mappings read from /proc/PID/maps (processes running before the attach) carry no build-id:
  // a selection by build-id is then decided by the file's own.
  const bool ask_file = !selected && dso.build_id.empty() && !selection_.build_ids.empty();
  if (!selected && !ask_file) return c;
  OpenResult opened = open_mapped_binary(pid, mapping, dso);
  if (!opened.elf) {
    if (!selected) return c;  // cannot tell; not named by path
    c.verdict = opened.problem == OpenProblem::BuildIdMismatch
                    ? ImageChoice::Verdict::BuildIdMismatch
                    : ImageChoice::Verdict::Unreadable;
    c.why = opened.why;
    return c;
  }
  if (!selected) {
    const BuildId& id = opened.identity.build_id;
    if (id.empty() || std::find(selection_.build_ids.begin(), selection_.build_ids.end(), id) ==
                          selection_.build_ids.end()) {
      return c;
    }
  }
  c.verdict = ImageChoice::Verdict::Selected;
  if (!selection_.all) {
    // Said once per named binary at the end; a handful of entries, not one per sample.
    if (std::find(matched_paths_.begin(), matched_paths_.end(), dso.path) == matched_paths_.end())
      matched_paths_.push_back(dso.path);
    const BuildId& id = opened.identity.build_id;
    if (!id.empty() && std::find(matched_build_ids_.begin(), matched_build_ids_.end(), id) ==
                           matched_build_ids_.end())
      matched_build_ids_.push_back(id);
  }
  c.image = std::make_shared<LoadedImage>(std::move(opened.elf), std::move(opened.identity),
                                          load_options_);
  return c;
}

bool MappedImageSelector::matched_path(const std::string& path) const {
  return std::find(matched_paths_.begin(), matched_paths_.end(), path) != matched_paths_.end();
}

bool MappedImageSelector::matched_build_id(const BuildId& id) const {
  return std::find(matched_build_ids_.begin(), matched_build_ids_.end(), id) !=
         matched_build_ids_.end();
}

}  // namespace profcollect
