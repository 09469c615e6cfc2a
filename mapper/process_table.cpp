#include "mapper/process_table.h"

#include <algorithm>
#include <type_traits>

namespace profcollect {

ProcessTable::MapSet& ProcessTable::Process::writable() {
  if (!maps) {
    maps = std::make_shared<MapSet>();
  } else if (maps.use_count() > 1) {
    maps = std::make_shared<MapSet>(*maps);
  }
  return *maps;
}

ProcessTable::Process& ProcessTable::process(uint32_t pid) { return processes_[pid]; }

std::string ProcessTable::dso_key(std::string_view path, const BuildId& build_id, uint32_t maj,
                                  uint32_t min, uint64_t ino) {
  // The key holds everything that tells two files apart: a path reused by a new file (rebuilt
  // binary) gets its own Dso through the build-id or inode.
  std::string key;
  key.reserve(path.size() + 64);
  key.append(path);
  key.push_back('\0');
  key.append(build_id.to_hex());
  key.push_back('\0');
  key.append(std::to_string(maj) + ":" + std::to_string(min) + ":" + std::to_string(ino));
  return key;
}

uint32_t ProcessTable::intern_dso(const MmapRecord& r) {
  const uint32_t next =
      free_dsos_.empty() ? static_cast<uint32_t>(dsos_.size()) : free_dsos_.back();
  auto [it, inserted] =
      dso_index_.try_emplace(dso_key(r.filename, r.build_id, r.maj, r.min, r.ino), next);
  if (inserted) {
    Dso d;
    d.path = std::string(r.filename);
    d.build_id = r.build_id;
    d.maj = r.maj;
    d.min = r.min;
    d.ino = r.ino;
    d.kernel = r.pid == kKernelPid;
    if (next == dsos_.size()) {
      dsos_.push_back(std::move(d));
    } else {
      free_dsos_.pop_back();
      dsos_[next] = std::move(d);
    }
  }
  return it->second;
}

std::vector<uint32_t> ProcessTable::release_unmapped() {
  std::vector<bool> mapped(dsos_.size(), false);
  for (const uint32_t f : free_dsos_) mapped[f] = true;  // already released
  for (const auto& [start, m] : kernel_maps_) mapped[m.dso] = true;
  for (const auto& [pid, p] : processes_) {
    if (!p.maps) continue;
    for (const auto& [start, m] : *p.maps) mapped[m.dso] = true;
  }
  std::vector<uint32_t> released;
  for (uint32_t i = 0; i < dsos_.size(); ++i) {
    if (mapped[i]) continue;
    Dso& d = dsos_[i];
    dso_index_.erase(dso_key(d.path, d.build_id, d.maj, d.min, d.ino));
    d = Dso{};
    free_dsos_.push_back(i);
    released.push_back(i);
  }
  return released;
}

void ProcessTable::insert(MapSet& maps, const Mapping& m) {
  if (m.end <= m.start) return;
  // Trim or split every mapping that overlaps [m.start, m.end), as mmap over an existing range
  // does in the kernel.
  auto it = maps.upper_bound(m.start);
  if (it != maps.begin()) --it;
  while (it != maps.end() && it->second.start < m.end) {
    Mapping old = it->second;
    if (old.end <= m.start) {
      ++it;
      continue;
    }
    it = maps.erase(it);
    if (old.start < m.start) {
      Mapping left = old;
      left.end = m.start;
      maps.emplace(left.start, left);
    }
    if (old.end > m.end) {
      Mapping right = old;
      right.pgoff += m.end - old.start;
      right.start = m.end;
      maps.emplace(right.start, right);
    }
  }
  maps.emplace(m.start, m);
}

const Mapping* ProcessTable::lookup(const MapSet& maps, uint64_t addr) {
  auto it = maps.upper_bound(addr);
  if (it == maps.begin()) return nullptr;
  --it;
  return addr < it->second.end ? &it->second : nullptr;
}

void ProcessTable::on_mmap(const MmapRecord& r) {
  Mapping m;
  m.start = r.start;
  m.end = r.start + r.len;
  if (m.end < m.start) m.end = UINT64_MAX;  // kernel maps may run to the top of the space
  m.pgoff = r.pgoff;
  m.executable = r.executable;
  m.dso = intern_dso(r);
  if (r.pid == kKernelPid) {
    insert(kernel_maps_, m);
  } else {
    insert(process(r.pid).writable(), m);
  }
}

void ProcessTable::on_comm(const CommRecord& r) {
  // exec replaces the address space; the kernel reports the COMM before the new image's MMAPs.
  if (r.exec && r.pid == r.tid) {
    processes_[r.pid].maps.reset();
  }
}

void ProcessTable::on_task(const TaskRecord& r) {
  if (r.is_exit) {
    // Only the exit of the whole process ends its address space; samples of other threads may
    // still follow a thread's exit.
    if (r.pid == r.tid) processes_.erase(r.pid);
    return;
  }
  if (r.pid == r.ppid) return;  // a new thread shares its process's maps
  auto parent = processes_.find(r.ppid);
  Process child;
  if (parent != processes_.end()) child.maps = parent->second.maps;  // shared until written
  processes_[r.pid] = std::move(child);
}

void ProcessTable::update(const Record& r) {
  if (auto* m = std::get_if<MmapRecord>(&r)) {
    on_mmap(*m);
  } else if (auto* c = std::get_if<CommRecord>(&r)) {
    on_comm(*c);
  } else if (auto* t = std::get_if<TaskRecord>(&r)) {
    on_task(*t);
  }
}

const Mapping* ProcessTable::find(uint32_t pid, uint64_t addr, CpuMode mode) const {
  if (mode == CpuMode::Kernel || mode == CpuMode::GuestKernel || pid == kKernelPid) {
    return lookup(kernel_maps_, addr);
  }
  auto it = processes_.find(pid);
  if (it == processes_.end() || !it->second.maps) return nullptr;
  return lookup(*it->second.maps, addr);
}

void ProcessTable::overlapping(uint32_t pid, uint64_t start, uint64_t end,
                               std::vector<Mapping>& out) const {
  auto p = processes_.find(pid);
  if (p == processes_.end() || !p->second.maps || end <= start) return;
  const MapSet& maps = *p->second.maps;
  auto it = maps.upper_bound(start);
  if (it != maps.begin()) --it;
  for (; it != maps.end() && it->second.start < end; ++it) {
    if (it->second.end <= start) continue;
    Mapping m = it->second;
    if (m.start < start) {
      m.pgoff += start - m.start;
      m.start = start;
    }
    m.end = std::min(m.end, end);
    out.push_back(m);
  }
}

}  // namespace profcollect
