// The daemon's disk budget (max_disk_mb) and retention (retention_days) over its output
// directory: which binary directories go, least recently sampled first. A binary's last sample
// is the last_sample_ns of its meta.json (the directory's modification time when that cannot be
// read). The budget is a hard limit: a directory whose binary the running session profiles is
// chosen like any other (its owner then drops that binary's counts in memory too, or the next
// flush would write them back).
//
// Everything is reached from the output directory's descriptor without following links
// (output/directory_handle.h): a symlink or another user's entry planted there is neither
// counted, nor read, nor removed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace profcollect {

class DirectoryHandle;

struct SpoolEntry {
  std::string directory;        // its name under the output directory
  uint64_t bytes = 0;           // its files' sizes
  uint64_t last_sample_ns = 0;  // Unix epoch
};

struct SpoolLimits {
  std::optional<uint64_t> max_bytes;         // the whole output directory's files
  std::optional<uint64_t> expire_before_ns;  // a binary last sampled before it goes
};

struct Eviction {
  SpoolEntry entry;
  std::string reason;  // "retention_days" or "max_disk_mb"
};

// The sizes of the regular files under `dir` (what `ls -l` shows, not the blocks they take),
// links not followed; 0 when `dir` is missing or a link.
uint64_t directory_bytes(const std::string& dir);
uint64_t directory_bytes(const DirectoryHandle& dir);

// A binary directory's last sample: its meta.json's last_sample_ns, else the directory's
// modification time.
uint64_t last_sample_ns(const DirectoryHandle& dir);

// What to remove so that the limits hold: every entry last sampled before the retention limit,
// then the least recently sampled (ties by name) until `total_bytes` fits max_bytes.
std::vector<Eviction> choose_evictions(std::vector<SpoolEntry> entries, uint64_t total_bytes,
                                       const SpoolLimits& limits);

// What apply_spool_limits (collector/service/spool_index.h) did.
struct SpoolEnforcement {
  std::vector<Eviction> evicted;    // removed, in the order chosen
  std::vector<std::string> errors;  // what could not be read or removed
  uint64_t bytes_left = 0;          // the directory's files afterwards
};

}  // namespace profcollect
