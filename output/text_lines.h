// Walks a text file's contents line by line, counting lines from 1: what each reader of the
// text formats profcollect writes (samples.ip, branch fdata, bolt.preagg, the LLVM sample
// profile) does before parsing a line, so that its errors can name the line; and the number
// parsing they share.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace profcollect {

class TextLines {
 public:
  explicit TextLines(std::string_view text) : rest_(text) {}

  // The next line (without its newline) in `line`; false once the text is used up. A last
  // line without a newline is a line; the empty text has none.
  bool next(std::string_view& line) {
    if (rest_.empty()) return false;
    ++number_;
    const size_t nl = rest_.find('\n');
    line = rest_.substr(0, nl);
    rest_ = nl == std::string_view::npos ? std::string_view() : rest_.substr(nl + 1);
    return true;
  }
  // The number of the line next() returned last (0 before the first).
  size_t number() const { return number_; }

 private:
  std::string_view rest_;
  size_t number_ = 0;
};

// All of `s` as a number in `base`: no sign, no spaces, no more than 64 bits (strtoull would
// take "-1" as 2^64 - 1 and a too long count as its maximum without a word).
inline bool parse_whole_number(std::string_view s, int base, uint64_t& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// The fields of a line separated by one or more spaces.
inline std::vector<std::string_view> space_separated_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

}  // namespace profcollect
