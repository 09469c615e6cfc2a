#include "mapper/target_image_selector.h"

#include "mapper/image_kind.h"

namespace profcollect {

TargetImageSelector::TargetImageSelector(std::shared_ptr<LoadedImage> target, bool ignore_build_id,
                                         BinaryMatcher::BuildIdLookup recorded_build_id)
    : target_(std::move(target)),
      recorded_build_id_(recorded_build_id),
      matcher_(target_->identity().path, target_->identity().build_id, ignore_build_id,
               std::move(recorded_build_id), target_->kind()) {}

ImageChoice TargetImageSelector::choose(uint32_t, const Mapping&, const Dso& dso) {
  ImageChoice c;
  bool by_build_id = false;
  switch (matcher_.match(dso, &by_build_id)) {
    case DsoMatch::Target:
      c.verdict = ImageChoice::Verdict::Selected;
      c.image = target_;
      // Matched by name alone: a build-id still to come may say it is another file.
      c.provisional = !by_build_id && !settled_ && !target_->identity().build_id.empty();
      matched_by_name_ = !by_build_id;
      break;
    case DsoMatch::BuildIdMismatch:
      c.verdict = ImageChoice::Verdict::BuildIdMismatch;
      if (mismatched_path_.empty()) {
        mismatched_path_ = dso.path;
        // The build-id table names the kernel "[kernel.kallsyms]", its mapping "[kernel.kallsyms]_text".
        const std::string listed = dso.kernel ? dso_display_name(dso) : dso.path;
        const BuildId* recorded =
            dso.build_id.empty() && recorded_build_id_ ? recorded_build_id_(listed) : nullptr;
        mismatched_build_id_ = recorded ? *recorded : dso.build_id;
      }
      break;
    default:
      c.verdict = ImageChoice::Verdict::NotSelected;
      break;
  }
  return c;
}

}  // namespace profcollect
