#include "collector/live/live_engine.h"

#include <time.h>

#include "collector/host/clock_time.h"
#include "collector/live/cpu_follower.h"
#include "collector/live/live_record_source.h"

namespace profcollect {

LiveEngine::LiveEngine(CollectionTarget target) : target_(std::move(target)) {}

LiveEngine::~LiveEngine() = default;

void LiveEngine::open_events(std::vector<EventSetMember> members,
                             const CollectionTarget& event_target, const EventSetOptions& options,
                             const PerfPermissions& permissions) {
  for (const EventSetMember& m : members) event_names_.push_back(m.name);
  events_ = std::make_unique<PerfEventSet>(std::move(members), event_target, options, permissions);
  source_ = std::make_unique<LiveRecordSource>(*events_);
}

void LiveEngine::follow_cpus() {
  cpus_ = std::make_unique<CpuFollower>(*events_, source_->reader());
}

std::vector<std::string> LiveEngine::opening_notes() const {
  std::vector<std::string> notes = events_->notes();
  if (cpus_)
    for (std::string& n : cpus_->opening_notes()) notes.push_back(std::move(n));
  return notes;
}

void LiveEngine::take_monotonic_time_to_epoch() {
  time_to_epoch_ = static_cast<int64_t>(clock_ns(CLOCK_REALTIME)) -
                   static_cast<int64_t>(clock_ns(CLOCK_MONOTONIC));
}

void LiveEngine::start() {
  if (target_.kind == TargetKind::Command) return;  // enable_on_exec starts the events
  events_->enable();
  source_->add_existing_processes(target_);
}

std::vector<int> LiveEngine::descriptors() const { return events_->pollable_fds(); }

bool LiveEngine::descriptors_changed() { return cpus_ && cpus_->descriptors_changed(); }

std::vector<std::string> LiveEngine::take_notes() {
  if (!cpus_) return {};
  return cpus_->take_notes();
}

}  // namespace profcollect
