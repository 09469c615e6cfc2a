// Reads a no_lbr fdata file back (ours or perf2bolt's), so that a profile directory can be added
// to across runs: counts per (function name, offset) plus the header's event names, and whether
// it was collected on a BOLTed binary (a first line "boltedcollection", as perf2bolt writes for a
// profile it translated through BAT: llvm-bolt then reads it more permissively).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace profcollect {

// The line a profile collected on a BOLTed binary begins with (perf2bolt's, llvm-bolt's).
inline constexpr std::string_view kBoltedCollectionLine = "boltedcollection";

// The text after a first "boltedcollection" line, and whether there was one.
std::string_view after_bolted_collection(std::string_view text, bool* bolted = nullptr);
// Whether an fdata text is a no_lbr profile (its first line, after any boltedcollection line).
bool is_no_lbr_fdata(std::string_view text);

struct NoLbrFdata {
  bool bolted_collection = false;                               // see above
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
