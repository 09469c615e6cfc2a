// One generation of a binary's profile directory: every file of a flush, replaced together.
//
// The files are written into a new hidden directory beside the binary's (".<name>.gen-<random>"),
// fsynced, and swapped in with renameat2(RENAME_EXCHANGE); the previous generation, now under the
// hidden name, is removed. Where the file system cannot exchange, the old directory is renamed
// aside (".<name>.old-<random>") before the new one takes its name. So after a crash at any
// instant the directory holds the files of one flush and only those, and what is left over is a
// hidden entry that remove_leftover_generations() cleans up at the next start (bringing back a
// directory whose replacement was cut short). Files set aside by an earlier run (named
// "*.unreadable-<time>") are carried into every new generation, never dropped.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "output/directory_handle.h"

namespace profcollect {

struct GenerationModes {
  mode_t directory = 0700;
  mode_t file = 0600;
};

// Replaces the subdirectory `name` of `parent` by one holding exactly `files` (name, content)
// plus the set-aside files of the current generation. Throws OutputError; on failure the
// current generation is untouched and nothing new is left behind.
void write_generation(const DirectoryHandle& parent, const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& files,
                      GenerationModes modes = {});

// Removes what interrupted writes left in `parent` (this user's hidden generation directories
// and temporary files), and restores a directory whose replacement was cut short. Returns what
// it did, one line each.
std::vector<std::string> remove_leftover_generations(const DirectoryHandle& parent);

// Whether an entry name is a set-aside file ("bolt.fdata.unreadable-1733000000").
bool is_set_aside(const std::string& name);

}  // namespace profcollect
