// Walks a text file's contents line by line, counting lines from 1: what each reader of the
// text formats profcollect writes (samples.ip, branch fdata, bolt.preagg, the LLVM sample
// profile) does before parsing a line, so that its errors can name the line.
#pragma once

#include <cstddef>
#include <string_view>

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

}  // namespace profcollect
