// What the daemon's output directory holds, kept in memory: each binary directory's size and
// last sample, and the bytes of everything else counted there (collection.json, kernel.json,
// a generation being written). The directory is read whole once (rescan(), at the start); after
// that a flush lists it (one readdir) and reads only the entries it wrote and those that appeared
// since (refresh()), so the budget's bookkeeping costs what was written, not what the directory
// holds: the limits used to re-read every meta.json after every flush. (An existing directory
// changed by someone else is seen at the next rescan: a restart, or a new output_dir.) Sizes and the rules of what is counted are spool_limits.h's: links
// and another user's entries are neither counted nor read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collector/service/spool_limits.h"

namespace profcollect {

class DirectoryHandle;

class SpoolIndex {
 public:
  // Reads every entry of `dir`.
  void rescan(const DirectoryHandle& dir);
  // Lists `dir`: forgets what is gone, reads what is new, and reads again the entries named (a
  // binary directory: its size and its meta.json; anything else: its size) and hidden ones (a
  // generation being written).
  void refresh(const DirectoryHandle& dir, const std::vector<std::string>& names);
  void forget(const std::string& name);

  // The binary directories, as choose_evictions() takes them.
  std::vector<SpoolEntry> binaries() const;
  // Every byte counted: the binary directories and everything beside them.
  uint64_t total_bytes() const;
  size_t rescans() const { return rescans_; }
  size_t entries_read() const { return entries_read_; }

 private:
  void read_entry(const DirectoryHandle& dir, const std::string& name);

  // A binary directory's size and last sample, by its name. The name is kept once: a daemon
  // that profiles ever new binaries holds tens of thousands of these for as long as it runs.
  struct Binary {
    uint64_t bytes = 0;
    uint64_t last_sample_ns = 0;
  };
  std::map<std::string, Binary> binaries_;
  std::map<std::string, uint64_t> others_;
  size_t rescans_ = 0;
  size_t entries_read_ = 0;  // entries read since the index was made (for tests)
};

// Applies `limits` to the output directory `dir` with what `index` knows of it: removes what
// choose_evictions() picks and forgets it.
SpoolEnforcement apply_spool_limits(const DirectoryHandle& dir, SpoolIndex& index,
                                    const SpoolLimits& limits);

}  // namespace profcollect
