#include "output/profile_generation.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>

#include <cerrno>
#include <cstring>

namespace profcollect {

namespace {

constexpr std::string_view kGeneration = ".gen-";
constexpr std::string_view kOld = ".old-";

// renameat2 with RENAME_EXCHANGE or RENAME_NOREPLACE; errno as the kernel set it.
int rename2(int dirfd, const std::string& from, const std::string& to, unsigned flags) {
  return ::renameat2(dirfd, from.c_str(), dirfd, to.c_str(), flags);
}

// The binary directory a hidden ".<name><marker><random>" entry belongs to, or "" if it is none.
std::string owner_name(const std::string& entry, std::string_view marker) {
  if (entry.size() < 2 || entry[0] != '.') return {};
  const size_t at = entry.rfind(marker);
  if (at == std::string::npos || at < 2) return {};
  return entry.substr(1, at - 1);
}

}  // namespace

bool is_set_aside(const std::string& name) {
  return name.find(".unreadable-") != std::string::npos;
}

void write_generation(const DirectoryHandle& parent, const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& files,
                      GenerationModes modes) {
  const std::string fresh = temporary_name("." + name + std::string(kGeneration));
  std::optional<DirectoryHandle> current =
      parent.open_subdirectory(name);  // refuses links, others' entries
  DirectoryHandle next = parent.create_subdirectory(fresh, modes.directory);
  try {
    for (const auto& [file, content] : files) next.create_file(file, content, modes.file);
    if (current) {
      for (const std::string& entry : current->entries()) {
        if (is_set_aside(entry)) next.link_from(*current, entry);
      }
    }
    next.sync();
    if (!current) {
      if (rename2(parent.fd(), fresh, name, RENAME_NOREPLACE) != 0) {
        throw OutputError(parent.path_of(name),
                          std::string("cannot create: ") + std::strerror(errno));
      }
    } else if (rename2(parent.fd(), fresh, name, RENAME_EXCHANGE) != 0) {
      if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
        throw OutputError(parent.path_of(name),
                          std::string("cannot replace: ") + std::strerror(errno));
      }
      // No exchange here: the old generation steps aside first. A crash in between leaves it
      // under its hidden name, and the next start brings it back.
      const std::string old = temporary_name("." + name + std::string(kOld));
      parent.rename_entry(name, old);
      if (rename2(parent.fd(), fresh, name, RENAME_NOREPLACE) != 0) {
        const int e = errno;
        parent.rename_entry(old, name);
        throw OutputError(parent.path_of(name), std::string("cannot replace: ") + std::strerror(e));
      }
      parent.sync();
      parent.remove_tree(old);
      parent.sync();
      return;
    }
  } catch (const OutputError& e) {
    try {
      parent.remove_tree(fresh);
    } catch (const OutputError&) {
      // Left for the next start to clean up.
    }
    // Named by where the file was going, not by the hidden directory of this attempt: the same
    // failure then reads the same at every flush (and is said once).
    std::string what = e.what();
    const std::string hidden = parent.path_of(fresh), visible = parent.path_of(name);
    for (size_t at = what.find(hidden); at != std::string::npos;
         at = what.find(hidden, at + visible.size())) {
      what.replace(at, hidden.size(), visible);
    }
    const size_t colon = what.find(": ");
    throw OutputError(what.substr(0, colon),
                      colon == std::string::npos ? "write failed" : what.substr(colon + 2));
  }
  parent.sync();
  // After the exchange the hidden name holds the previous generation.
  if (current) parent.remove_tree(fresh);
}

std::vector<std::string> remove_leftover_generations(const DirectoryHandle& parent) {
  std::vector<std::string> done;
  for (const std::string& entry : parent.entries()) {
    if (entry.empty() || entry[0] != '.' || !parent.owns_entry(entry)) continue;
    const std::string of_generation = owner_name(entry, kGeneration);
    const std::string of_old = owner_name(entry, kOld);
    const bool temp_file = entry.find(".tmp-") != std::string::npos;
    if (!of_old.empty() && !parent.has_entry(of_old)) {
      parent.rename_entry(entry, of_old);
      done.push_back(parent.path_of(of_old) + ": restored from an interrupted replacement");
    } else if (!of_generation.empty() || !of_old.empty() || temp_file) {
      parent.remove_tree(entry);
      done.push_back(parent.path_of(entry) + ": removed, left by an interrupted write");
    }
  }
  if (!done.empty()) parent.sync();
  return done;
}

}  // namespace profcollect
