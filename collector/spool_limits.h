// The daemon's disk budget (max_disk_mb) and retention (retention_days) over its output
// directory: which binary directories go, least recently sampled first. A binary's last sample
// is the last_sample_ns of its meta.json (the directory's modification time when that cannot be
// read). Directories of binaries the running session profiles are never chosen: their counts
// are in memory too, and would be written back at the next flush.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace profcollect {

struct SpoolEntry {
  std::string directory;  // its name under the output directory
  uint64_t bytes = 0;     // its files' sizes
  uint64_t last_sample_ns = 0;  // Unix epoch
};

struct SpoolLimits {
  std::optional<uint64_t> max_bytes;   // the whole output directory's files
  std::optional<uint64_t> expire_before_ns;  // a binary last sampled before it goes
};

struct Eviction {
  SpoolEntry entry;
  std::string reason;  // "retention_days" or "max_disk_mb"
};

// The sizes of the regular files under `dir`, links not followed.
uint64_t directory_bytes(const std::string& dir);

// The binary directories directly under `dir` (links not followed).
std::vector<SpoolEntry> read_spool(const std::string& dir);

// What to remove so that the limits hold: every entry last sampled before the retention limit,
// then the least recently sampled until `total_bytes` fits max_bytes; never one in `active`.
std::vector<Eviction> choose_evictions(std::vector<SpoolEntry> entries, uint64_t total_bytes, const SpoolLimits& limits,
                                       const std::set<std::string>& active);

}  // namespace profcollect
