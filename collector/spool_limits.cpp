#include "collector/spool_limits.h"

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

uint64_t last_sample_ns(const DirectoryHandle& dir) {
  try {
    if (auto text = dir.read_file("meta.json")) {
      const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
      const auto it = j.is_object() ? j.find("last_sample_ns") : j.end();
      if (it != j.end() && it->is_number_unsigned() && it->get<uint64_t>() > 0) return it->get<uint64_t>();
    }
  } catch (const OutputError&) {
    // A meta.json that is a link or not ours: the directory's own time says when it was written.
  }
  struct stat st {};
  if (::fstat(dir.fd(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(st.st_mtim.tv_nsec);
}

}  // namespace

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

std::vector<SpoolEntry> read_spool(const DirectoryHandle& dir) {
  std::vector<SpoolEntry> entries;
  for (const std::string& name : dir.entries()) {
    if (name.starts_with(".")) continue;
    const auto st = entry_stat(dir, name);
    if (!st || !S_ISDIR(st->st_mode) || st->st_uid != ::geteuid()) continue;
    try {
      if (auto sub = dir.open_subdirectory(name)) entries.push_back({name, directory_bytes(*sub), last_sample_ns(*sub)});
    } catch (const OutputError&) {
      // Replaced meanwhile by a link or another user's entry: left alone.
    }
  }
  return entries;
}

std::vector<Eviction> choose_evictions(std::vector<SpoolEntry> entries, uint64_t total_bytes, const SpoolLimits& limits) {
  std::sort(entries.begin(), entries.end(), [](const SpoolEntry& a, const SpoolEntry& b) {
    return a.last_sample_ns != b.last_sample_ns ? a.last_sample_ns < b.last_sample_ns : a.directory < b.directory;
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

SpoolEnforcement apply_spool_limits(const std::string& path, const SpoolLimits& limits) {
  SpoolEnforcement done;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return done;  // nothing written yet
  try {
    const DirectoryHandle dir = DirectoryHandle::open_existing(path);
    done.bytes_left = directory_bytes(dir);
    for (Eviction& e : choose_evictions(read_spool(dir), done.bytes_left, limits)) {
      try {
        dir.remove_tree(e.entry.directory);
      } catch (const OutputError& err) {
        done.errors.push_back(std::string("cannot evict ") + e.entry.directory + ": " + err.what());
        continue;
      }
      done.bytes_left -= std::min(done.bytes_left, e.entry.bytes);
      done.evicted.push_back(std::move(e));
    }
    if (!done.evicted.empty()) dir.sync();
  } catch (const OutputError& e) {
    done.errors.push_back(std::string("max_disk_mb and retention_days not applied: ") + e.what());
  }
  return done;
}

}  // namespace profcollect
