#include "collector/service/spool_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "output/directory_handle.h"

namespace profcollect {

void SpoolIndex::rescan(const DirectoryHandle& dir) {
  binaries_.clear();
  others_.clear();
  ++rescans_;
  std::vector<std::string> names;
  try {
    names = dir.entries();
  } catch (const OutputError&) {
    return;
  }
  for (const std::string& name : names) read_entry(dir, name);
}

void SpoolIndex::refresh(const DirectoryHandle& dir, const std::vector<std::string>& names) {
  // One listing (no entry opened): what appeared since (an operator's copy, a directory another
  // tool left) is read, what went is forgotten. Of what the index knows, only the entries named
  // are read again, and hidden ones (a generation being written, or one an interrupted write
  // left: gone by now or about to be). The listing is searched sorted, not copied into a set:
  // it holds every entry of the directory, tens of thousands after a long run.
  std::vector<std::string> listed;
  try {
    listed = dir.entries();
  } catch (const OutputError&) {
    return;
  }
  std::sort(listed.begin(), listed.end());
  auto present = [&listed](const std::string& name) {
    return std::binary_search(listed.begin(), listed.end(), name);
  };
  std::vector<std::string> gone;
  for (const auto& [name, entry] : binaries_)
    if (!present(name)) gone.push_back(name);
  for (const auto& [name, bytes] : others_)
    if (!present(name)) gone.push_back(name);
  for (const std::string& name : gone) forget(name);
  const std::set<std::string> named(names.begin(), names.end());
  for (const std::string& name : listed) {
    const bool known = binaries_.count(name) || others_.count(name);
    if (!known || named.count(name) || name.starts_with(".")) read_entry(dir, name);
  }
}

void SpoolIndex::read_entry(const DirectoryHandle& dir, const std::string& name) {
  ++entries_read_;
  binaries_.erase(name);
  others_.erase(name);
  struct stat st {};
  if (name.empty() || name.find('/') != std::string::npos ||
      ::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return;
  if (S_ISREG(st.st_mode)) {
    others_[name] = static_cast<uint64_t>(st.st_size);
    return;
  }
  if (!S_ISDIR(st.st_mode)) return;  // a link, a socket, ...: not counted
  try {
    const std::optional<DirectoryHandle> sub = dir.open_subdirectory(name);
    if (!sub) return;
    const uint64_t bytes = directory_bytes(*sub);
    if (name.starts_with(".") || st.st_uid != ::geteuid()) {
      others_[name] = bytes;
    } else {
      binaries_[name] = Binary{bytes, last_sample_ns(*sub)};
    }
  } catch (const OutputError&) {
    // Another user's directory, or replaced meanwhile by a link: neither counted nor read.
  }
}

void SpoolIndex::forget(const std::string& name) {
  binaries_.erase(name);
  others_.erase(name);
}

std::vector<SpoolEntry> SpoolIndex::binaries() const {
  std::vector<SpoolEntry> out;
  out.reserve(binaries_.size());
  for (const auto& [name, b] : binaries_)
    out.push_back(SpoolEntry{name, b.bytes, b.last_sample_ns});
  return out;
}

uint64_t SpoolIndex::total_bytes() const {
  uint64_t total = 0;
  for (const auto& [name, entry] : binaries_) total += entry.bytes;
  for (const auto& [name, bytes] : others_) total += bytes;
  return total;
}

SpoolEnforcement apply_spool_limits(const DirectoryHandle& dir, SpoolIndex& index,
                                    const SpoolLimits& limits) {
  SpoolEnforcement done;
  done.bytes_left = index.total_bytes();
  for (Eviction& e : choose_evictions(index.binaries(), done.bytes_left, limits)) {
    try {
      dir.remove_tree(e.entry.directory);
    } catch (const OutputError& err) {
      done.errors.push_back(std::string("cannot evict ") + e.entry.directory + ": " + err.what());
      continue;
    }
    index.forget(e.entry.directory);
    done.bytes_left -= std::min(done.bytes_left, e.entry.bytes);
    done.evicted.push_back(std::move(e));
  }
  if (!done.evicted.empty()) {
    try {
      dir.sync();
    } catch (const OutputError& err) {
      done.errors.push_back(err.what());
    }
  }
  return done;
}

}  // namespace profcollect
