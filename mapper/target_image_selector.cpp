#include "mapper/target_image_selector.h"

namespace profcollect {

TargetImageSelector::TargetImageSelector(std::shared_ptr<LoadedImage> target, bool ignore_build_id,
                                         BinaryMatcher::BuildIdLookup recorded_build_id)
    : target_(std::move(target)),
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
      break;
    case DsoMatch::BuildIdMismatch:
      c.verdict = ImageChoice::Verdict::BuildIdMismatch;
      break;
    default:
      c.verdict = ImageChoice::Verdict::NotSelected;
      break;
  }
  return c;
}

}  // namespace profcollect
