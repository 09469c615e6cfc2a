#include "mapper/binary_matcher.h"

#include "mapper/image_kind.h"

#include <climits>
#include <cstdlib>

namespace profcollect {

namespace {
std::string_view basename_of(std::string_view p) {
  auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}
// perf appends " (deleted)" to files removed while mapped.
std::string_view strip_deleted(std::string_view p) {
  constexpr std::string_view kDeleted = " (deleted)";
  if (p.size() > kDeleted.size() && p.substr(p.size() - kDeleted.size()) == kDeleted) {
    p.remove_suffix(kDeleted.size());
  }
  return p;
}
}  // namespace

BinaryMatcher::BinaryMatcher(std::string target_path, BuildId target_build_id, bool ignore_build_id,
                             BuildIdLookup recorded_build_id, ImageKind target_kind)
    : target_path_(std::move(target_path)),
      target_build_id_(target_build_id),
      ignore_build_id_(ignore_build_id),
      recorded_build_id_(std::move(recorded_build_id)),
      target_kind_(target_kind) {
  target_basename_ = std::string(basename_of(target_path_));
  char buf[PATH_MAX];
  if (realpath(target_path_.c_str(), buf)) target_realpath_ = buf;
}

bool BinaryMatcher::name_matches(const Dso& dso) const {
  switch (target_kind_) {
    case ImageKind::Kernel:
      return true;  // there is one kernel image in a recording
    case ImageKind::KernelModule:
      return module_name(dso.path) == module_name(target_path_);
    default:
      break;
  }
  std::string_view path = strip_deleted(dso.path);
  if (path == target_path_ || (!target_realpath_.empty() && path == target_realpath_)) return true;
  return basename_of(path) == target_basename_;
}

DsoMatch BinaryMatcher::match(const Dso& dso, bool* by_build_id) const {
  DsoMatch result;
  const bool kernel_target =
      target_kind_ == ImageKind::Kernel || target_kind_ == ImageKind::KernelModule;
  if (dso.kernel && (!kernel_target || classify_image(dso) != target_kind_)) {
    result = DsoMatch::Kernel;
  } else if (!dso.kernel && is_anonymous_path(dso.path)) {
    result = DsoMatch::Anon;
  } else if (!dso.kernel && kernel_target) {
    result = DsoMatch::Other;
  } else {
    const BuildId* recorded = dso.build_id.empty() ? nullptr : &dso.build_id;
    // perf lists the kernel's build-id as "[kernel.kallsyms]", a module's by its path.
    if (!recorded && recorded_build_id_) {
      recorded =
          recorded_build_id_(target_kind_ == ImageKind::Kernel ? dso_display_name(dso) : dso.path);
    }
    if (recorded && !target_build_id_.empty()) {
      if (by_build_id) *by_build_id = true;
      // Build-ids decide, whatever the file is called (a binary copied or renamed after the
      // recording still matches; a rebuilt one of the same name does not).
      if (*recorded == target_build_id_) {
        result = DsoMatch::Target;
      } else if (name_matches(dso)) {
        result = ignore_build_id_ ? DsoMatch::Target : DsoMatch::BuildIdMismatch;
      } else {
        result = DsoMatch::Other;
      }
    } else {
      result = name_matches(dso) ? DsoMatch::Target : DsoMatch::Other;
    }
  }
  return result;
}

}  // namespace profcollect
