#include "collector/live/cpu_follower.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "collector/host/online_cpus.h"
#include "collector/live/perf_event_error.h"
#include "collector/live/perf_event_set.h"
#include "collector/live/record_batch.h"
#include "collector/live/ring_buffer_drain.h"

namespace profcollect {

namespace {

std::string read_small_file(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

CpuFollower::CpuFollower(PerfEventSet& events, RingBufferDrain& reader, std::string online_path,
                         std::string possible_path, std::chrono::milliseconds interval)
    : events_(events),
      reader_(reader),
      online_path_(std::move(online_path)),
      possible_path_(std::move(possible_path)),
      interval_(interval) {
  last_online_ = read_small_file(online_path_);
}

std::vector<int> CpuFollower::read_cpus(const std::string& path) const {
  try {
    return parse_cpu_list(read_small_file(path));
  } catch (const std::exception&) {
    return {};
  }
}

std::vector<std::string> CpuFollower::opening_notes() const {
  std::vector<std::string> notes;
  const std::vector<int> open = events_.open_cpus();
  for (int cpu : read_cpus(possible_path_)) {
    if (std::find(open.begin(), open.end(), cpu) == open.end())
      notes.push_back("CPU " + std::to_string(cpu) +
                      " is offline: no samples from it until it comes online");
  }
  return notes;
}

std::vector<std::string> CpuFollower::take_notes() {
  std::lock_guard<std::mutex> lock(notes_mutex_);
  std::vector<std::string> out;
  out.swap(notes_);
  return out;
}

void CpuFollower::follow(RecordBatch& batch, const std::function<void(size_t)>& opened) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_look_ < interval_) return;
  last_look_ = now;
  const std::string text = read_small_file(online_path_);
  if (text.empty() || text == last_online_) return;
  std::vector<int> online;
  try {
    online = parse_cpu_list(text);
  } catch (const std::exception&) {
    return;
  }
  std::vector<std::string> notes;
  last_online_ = text;
  failed_.clear();
  bool changed = false;
  const std::vector<int> open = events_.open_cpus();
  for (size_t index = 0; index < open.size(); ++index) {
    if (open[index] < 0 || std::find(online.begin(), online.end(), open[index]) != online.end())
      continue;
    reader_.retire(index);
    events_.close_cpu(index);
    notes.push_back("CPU " + std::to_string(open[index]) +
                    " went offline: no samples from it until it comes back");
    changed = true;
  }
  for (int cpu : online) {
    if (std::find(open.begin(), open.end(), cpu) != open.end()) continue;
    std::vector<size_t> ids_before(events_.member_count());
    for (size_t m = 0; m < events_.member_count(); ++m) ids_before[m] = events_.ids(m).size();
    size_t index;
    try {
      index = events_.open_cpu(cpu);
    } catch (const std::exception& e) {
      failed_.push_back(cpu);
      notes.push_back("CPU " + std::to_string(cpu) +
                      " came online, but its events could not be opened: " + e.what());
      continue;
    }
    for (size_t m = 0; m < events_.member_count(); ++m) {
      const std::vector<uint64_t>& ids = events_.ids(m);
      for (size_t i = ids_before[m]; i < ids.size(); ++i)
        batch.new_ids.emplace_back(static_cast<uint32_t>(m), ids[i]);
    }
    if (RingBuffer* ring = events_.ring_buffer(index)) {
      reader_.add_buffer(ring);
      if (reader_.buffer_count() != index + 1) {
        notes.push_back("CPU " + std::to_string(cpu) + ": buffer out of step, not read");
      }
    }
    try {
      if (opened) opened(index);
    } catch (const std::exception& e) {
      notes.push_back("CPU " + std::to_string(cpu) +
                      " came online, but its sampling could not be set up: " + e.what());
      changed = true;
      continue;
    }
    notes.push_back("CPU " + std::to_string(cpu) + " came online: collecting on it");
    changed = true;
  }
  if (changed) descriptors_changed_ = true;
  if (!notes.empty()) {
    std::lock_guard<std::mutex> lock(notes_mutex_);
    for (std::string& n : notes) notes_.push_back(std::move(n));
  }
}

}  // namespace profcollect
