// The address spaces of the processes in a recording, fed records and doing no I/O (the model is
// simpleperf's ThreadTree): MMAP/MMAP2 add mappings (splitting what they overlap), FORK copies
// the parent's address space into a new process, COMM with the exec flag clears it, EXIT ends
// it. Mappings of existing processes read from /proc/PID/maps enter as MMAP2 records too, so
// there is one input path.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "record/record.h"
#include "record/build_id.h"

namespace profcollect {

// One mapped file (or pseudo-file such as "[vdso]" or "//anon"), interned: every mapping of the
// same file shares one Dso.
struct Dso {
  std::string path;
  BuildId build_id;  // from an MMAP2 record carrying it; may be empty
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0;
  bool kernel = false;  // mapped by the kernel's own MMAP records (pid -1): kernel or module
};

struct Mapping {
  uint64_t start = 0, end = 0;  // [start, end)
  uint64_t pgoff = 0;
  uint32_t dso = 0;  // index into ProcessTable::dsos()
  bool executable = true;
};

class ProcessTable {
 public:
  static constexpr uint32_t kKernelPid = UINT32_MAX;  // perf's pid -1 for kernel mappings

  void on_mmap(const MmapRecord& r);
  void on_comm(const CommRecord& r);
  void on_task(const TaskRecord& r);
  // Dispatches any record to the handlers above; samples and others are ignored.
  void update(const Record& r);

  // The mapping of pid holding addr, or nullptr. Kernel addresses (cpumode Kernel) are looked up
  // in the kernel's own mappings.
  const Mapping* find(uint32_t pid, uint64_t addr, CpuMode mode) const;
  // Appends to `out` the mappings of user process pid that overlap [start, end), clipped to it.
  void overlapping(uint32_t pid, uint64_t start, uint64_t end, std::vector<Mapping>& out) const;

  // Releases every mapped file no process maps any more (the kernel's own are kept): its Dso
  // entry is emptied and its index reused by a later file. Returns the released indices, so that
  // whatever is kept per Dso elsewhere can be dropped too. Keeps a long run's state bounded.
  std::vector<uint32_t> release_unmapped();
  size_t live_dso_count() const { return dsos_.size() - free_dsos_.size(); }

  const std::vector<Dso>& dsos() const { return dsos_; }
  const Dso& dso(uint32_t index) const { return dsos_[index]; }
  size_t process_count() const { return processes_.size(); }

 private:
  using MapSet = std::map<uint64_t, Mapping>;  // keyed by start; no two overlap
  struct Process {
    std::shared_ptr<MapSet> maps;  // copy-on-write: a fork shares until either side changes
    MapSet& writable();
  };

  uint32_t intern_dso(const MmapRecord& r);
  static std::string dso_key(std::string_view path, const BuildId& build_id, uint32_t maj,
                             uint32_t min, uint64_t ino);
  Process& process(uint32_t pid);
  static void insert(MapSet& maps, const Mapping& m);
  static const Mapping* lookup(const MapSet& maps, uint64_t addr);

  std::unordered_map<uint32_t, Process> processes_;
  MapSet kernel_maps_;
  std::vector<Dso> dsos_;
  std::unordered_map<std::string, uint32_t> dso_index_;
  std::vector<uint32_t> free_dsos_;  // released indices, reused first
};

}  // namespace profcollect
