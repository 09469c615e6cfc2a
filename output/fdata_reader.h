// Reads a no_lbr fdata file back (ours or perf2bolt's), so that a profile directory can be added
// to across runs: counts per (function name, offset) plus the header's event names.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace profcollect {

struct NoLbrFdata {
  std::vector<std::string> events;                              // "cpu-clock:" as written
  std::map<std::pair<std::string, uint64_t>, uint64_t> counts;  // (escaped name, offset) -> count
  uint64_t total() const {
    uint64_t t = 0;
    for (const auto& [k, c] : counts) t += c;
    return t;
  }
};

// Parses the text of a no_lbr fdata; nullopt (with `error` set) if it is not one.
std::optional<NoLbrFdata> parse_no_lbr_fdata(const std::string& text, std::string* error);

// Writes it back in FdataWriter's layout (sorted by name, then offset).
std::string format_no_lbr_fdata(const NoLbrFdata& fdata);

}  // namespace profcollect
