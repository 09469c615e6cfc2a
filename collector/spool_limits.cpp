#include "collector/spool_limits.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace profcollect {

namespace fs = std::filesystem;

uint64_t directory_bytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code e;
    if (it->symlink_status(e).type() == fs::file_type::regular) {
      const uintmax_t size = it->file_size(e);
      if (!e) total += size;
    }
  }
  return total;
}

namespace {

uint64_t last_sample_ns(const fs::path& dir) {
  std::ifstream meta(dir / "meta.json");
  if (meta) {
    const nlohmann::json j = nlohmann::json::parse(meta, nullptr, false);
    if (j.is_object() && j.contains("last_sample_ns") && j["last_sample_ns"].is_number_unsigned() &&
        j["last_sample_ns"].get<uint64_t>() > 0) {
      return j["last_sample_ns"].get<uint64_t>();
    }
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(st.st_mtim.tv_nsec);
}

}  // namespace

std::vector<SpoolEntry> read_spool(const std::string& dir) {
  std::vector<SpoolEntry> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e;
    if (it->symlink_status(e).type() != fs::file_type::directory) continue;
    entries.push_back({it->path().filename().string(), directory_bytes(it->path().string()), last_sample_ns(it->path())});
  }
  return entries;
}

std::vector<Eviction> choose_evictions(std::vector<SpoolEntry> entries, uint64_t total_bytes, const SpoolLimits& limits,
                                       const std::set<std::string>& active) {
  std::sort(entries.begin(), entries.end(), [](const SpoolEntry& a, const SpoolEntry& b) {
    return a.last_sample_ns != b.last_sample_ns ? a.last_sample_ns < b.last_sample_ns : a.directory < b.directory;
  });
  std::vector<Eviction> out;
  for (const SpoolEntry& e : entries) {
    if (active.count(e.directory)) continue;
    const bool expired = limits.expire_before_ns && e.last_sample_ns < *limits.expire_before_ns;
    const bool over = limits.max_bytes && total_bytes > *limits.max_bytes;
    if (!expired && !over) continue;
    out.push_back({e, expired ? "retention_days" : "max_disk_mb"});
    total_bytes -= std::min(total_bytes, e.bytes);
  }
  return out;
}

}  // namespace profcollect
