// Progress on long conversions: a single updating line on stderr when it is a terminal.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace profcollect {

// Returns a progress callback, or an empty function when stderr is not a terminal or quiet.
std::function<void(uint64_t, uint64_t)> make_progress_reporter(const std::string& what, bool quiet);
// Clears the progress line if one was drawn.
void finish_progress();

}  // namespace profcollect
