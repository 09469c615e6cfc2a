#include "collector/service/spool_limits.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "output/directory_handle.h"

namespace profcollect {

namespace {

// fstatat without following; nullopt when the entry is gone.
std::optional<struct stat> entry_stat(const DirectoryHandle& dir, const std::string& name) {
  struct stat st {};
  if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return st;
}

}  // namespace

uint64_t last_sample_ns(const DirectoryHandle& dir) {
  try {
    if (auto text = dir.read_file("meta.json")) {
      const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
      const auto it = j.is_object() ? j.find("last_sample_ns") : j.end();
      if (it != j.end() && it->is_number_unsigned() && it->get<uint64_t>() > 0)
        return it->get<uint64_t>();
    }
  } catch (const OutputError&) {
    // A meta.json that is a link or not ours: the directory's own time says when it was written.
  }
  struct stat st {};
  if (::fstat(dir.fd(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
         static_cast<uint64_t>(st.st_mtim.tv_nsec);
}

uint64_t directory_bytes(const DirectoryHandle& dir) {
  uint64_t total = 0;
  std::vector<std::string> names;
  try {
    names = dir.entries();
  } catch (const OutputError&) {
    return 0;
  }
  for (const std::string& name : names) {
    const auto st = entry_stat(dir, name);
    if (!st) continue;
    if (S_ISREG(st->st_mode)) {
      total += static_cast<uint64_t>(st->st_size);
    } else if (S_ISDIR(st->st_mode)) {
      try {
        if (auto sub = dir.open_subdirectory(name)) total += directory_bytes(*sub);
      } catch (const OutputError&) {
        // Another user's directory: not ours to count (nor to remove).
      }
    }
  }
  return total;
}

uint64_t directory_bytes(const std::string& dir) {
  try {
    return directory_bytes(DirectoryHandle::open_existing(dir));
  } catch (const OutputError&) {
    return 0;
  }
}

std::vector<Eviction> choose_evictions(std::vector<SpoolEntry> entries, uint64_t total_bytes,
                                       const SpoolLimits& limits) {
  std::sort(entries.begin(), entries.end(), [](const SpoolEntry& a, const SpoolEntry& b) {
    return a.last_sample_ns != b.last_sample_ns ? a.last_sample_ns < b.last_sample_ns
                                                : a.directory < b.directory;
  });
  std::vector<Eviction> out;
  for (const SpoolEntry& e : entries) {
    const bool expired = limits.expire_before_ns && e.last_sample_ns < *limits.expire_before_ns;
    const bool over = limits.max_bytes && total_bytes > *limits.max_bytes;
    if (!expired && !over) continue;
    out.push_back({e, expired ? "retention_days" : "max_disk_mb"});
    total_bytes -= std::min(total_bytes, e.bytes);
  }
  return out;
}

}  // namespace profcollect
