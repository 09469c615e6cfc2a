// What the two live engines (perf_engine.h, bpf_engine.h) share: the perf events they open, the
// source that reads their ring buffers in time order, and system-wide the CPU follower; with
// them how a collection starts, which descriptors it waits on, what the follower changed and
// said, the events' names and the offset of their clock to the wall clock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collector/live/perf_event_set.h"
#include "collector/pipeline/collection_engine.h"
#include "collector/pipeline/collection_target.h"

namespace profcollect {

class CpuFollower;
class LiveRecordSource;

class LiveEngine : public CollectionEngine {
 public:
  ~LiveEngine() override;

  // Enables the events and reads the targets' processes from /proc; a command's events are
  // started by its exec (enable_on_exec).
  void start() override;
  std::vector<int> descriptors() const override;
  bool collects_live() const override { return true; }
  // What the CPU follower changed and said (system-wide only).
  bool descriptors_changed() override;
  std::vector<std::string> take_notes() override;
  std::optional<int64_t> time_to_epoch() const override { return time_to_epoch_; }
  std::vector<std::string> event_names() const override { return event_names_; }

 protected:
  // `target`: what the collection follows (its events may be opened for another, e.g. per CPU).
  explicit LiveEngine(CollectionTarget target);

  // Opens `members` (disabled) for `event_target`, and the source reading their buffers.
  void open_events(std::vector<EventSetMember> members, const CollectionTarget& event_target,
                   const EventSetOptions& options, const PerfPermissions& permissions);
  // System-wide: follows CPUs going offline and coming online. After open_events.
  void follow_cpus();
  // The events' notes, then the CPU follower's on the CPUs offline at the opening.
  std::vector<std::string> opening_notes() const;
  // The events sample on CLOCK_MONOTONIC: its offset to the wall clock now.
  void take_monotonic_time_to_epoch();

  const CollectionTarget& target() const { return target_; }

  std::unique_ptr<PerfEventSet> events_;
  std::unique_ptr<LiveRecordSource> source_;
  std::unique_ptr<CpuFollower> cpus_;  // system-wide: CPUs going offline and coming online
  std::optional<int64_t> time_to_epoch_;

 private:
  CollectionTarget target_;
  std::vector<std::string> event_names_;
};

}  // namespace profcollect
