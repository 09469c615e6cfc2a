// Which options the command line knows, and the one a misspelled option most likely meant
// ("--fre" -> "--freq"), for one-line usage errors.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace profcollect {

// Every spelling of every option of `app` and its subcommands: "-F", "--freq", ...
std::vector<std::string> option_spellings(CLI::App& app);
bool is_known_option(CLI::App& app, const std::string& name);
// The spelling nearest to `name` by edit distance, if it is close enough to be a typo.
std::optional<std::string> nearest_option(CLI::App& app, const std::string& name);
// Levenshtein distance (insertions, deletions, substitutions).
size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace profcollect
