#include "collector/pipeline/replay_engine.h"

namespace profcollect {

std::vector<std::string> ReplayEngine::event_names() const {
  std::vector<std::string> names;
  for (const auto& attr : source_->session().attrs) names.push_back(attr.name);
  return names;
}

void ReplayEngine::process(SamplePipeline& pipeline) {
  if (ended_) return;
  Record r;
  while (source_->next(r)) {
    if (const auto* l = std::get_if<LostRecord>(&r)) {
      counters_.lost_samples += l->lost;
      (l->is_lost_samples ? counters_.lost.kernel_dropped : counters_.lost.ring_buffer) += l->lost;
      ++counters_.lost_records;
    } else if (const auto* t = std::get_if<ThrottleRecord>(&r)) {
      if (!t->unthrottle) ++counters_.throttles;
    }
    pipeline.consume(r);
  }
  ended_ = true;
  pipeline.settle();
}

}  // namespace profcollect
