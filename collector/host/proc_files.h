// Small reads of /proc and /sys files, which report their size as 0 and must be read to the end.
#pragma once

#include <string>

namespace profcollect {

// The first line of the file without its newline; false when it cannot be opened.
bool read_first_line(const std::string& path, std::string& line);

// The whole file; false when it cannot be opened or read.
bool read_whole_file(const std::string& path, std::string& text);

}  // namespace profcollect
