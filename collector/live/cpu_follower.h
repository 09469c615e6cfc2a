// CPU hotplug in a system-wide collection. The kernel gives a CPU that goes offline no more
// samples, and when the CPU comes back its old per-CPU events stay dead: they must be opened
// again. The follower looks at /sys/devices/system/cpu/online at most every check interval (on
// the drain thread: a read of a small sysfs file) and, against the CPUs whose events are open:
//   went offline  its buffer (just read by the pass before) is forgotten by the reader and its
//                 events closed
//   came online   its events are opened with a buffer of their own, enabled, added to the
//                 reader; their ids go into the batch so that the session knows their records
// and says each change once. A CPU that went offline and came back between two looks is not
// seen (its events stay dead); the interval keeps that window short.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace profcollect {

class PerfEventSet;
class RingBufferDrain;
struct RecordBatch;

class CpuFollower {
 public:
  // `online_path` lists the online CPUs ("0-3,6"), `possible_path` every CPU there may be.
  CpuFollower(PerfEventSet& events, RingBufferDrain& reader,
              std::string online_path = "/sys/devices/system/cpu/online",
              std::string possible_path = "/sys/devices/system/cpu/possible",
              std::chrono::milliseconds interval = std::chrono::milliseconds(100));

  // The CPUs that exist but are offline now, said when the collection opens.
  std::vector<std::string> opening_notes() const;

  // The drain thread's: looks, when the interval has passed, and follows what changed; the new
  // events' ids are added to `batch`, and `opened(cpu_index)` is called for each CPU opened (the
  // BPF engine attaches its program to the new sampling event). What changed is kept as notes.
  void follow(RecordBatch& batch, const std::function<void(size_t)>& opened = {});

  // True once after a follow() changed the descriptors to wait on (the drain thread's).
  bool descriptors_changed() { return descriptors_changed_.exchange(false); }
  // The notes kept since the last call (the session thread's, to log).
  std::vector<std::string> take_notes();

 private:
  std::vector<int> read_cpus(const std::string& path) const;

  PerfEventSet& events_;
  RingBufferDrain& reader_;
  std::string online_path_, possible_path_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_look_{};
  std::string last_online_;  // the online list as last read: nothing to do while it stays
  std::vector<int> failed_;  // CPUs whose events could not be opened (tried again on a change)
  std::atomic<bool> descriptors_changed_{false};
  std::mutex notes_mutex_;
  std::vector<std::string> notes_;
};

}  // namespace profcollect
