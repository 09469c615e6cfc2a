// A regular expression on binary paths (the command line's binary patterns, the daemon's
// `binaries` and `exclude`): ECMAScript, compiled by std::regex. libstdc++ 12 reads the number
// of a back-reference (\N) or of a count ({N,M}) into a long without checking for overflow --
// undefined behaviour on 19 digits and more (tests/fuzz/daemon_config_fuzz found it) -- so a
// pattern with a number of more than 9 digits there is refused before std::regex sees it.
#pragma once

#include <regex>
#include <string>

namespace profcollect {

// Throws std::regex_error (error_backref, error_badbrace, or what std::regex throws).
std::regex compile_path_pattern(const std::string& pattern,
                                std::regex::flag_type flags = std::regex::ECMAScript);

}  // namespace profcollect
