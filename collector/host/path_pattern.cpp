#include "collector/host/path_pattern.h"

#include <cctype>
#include <cstddef>

namespace profcollect {

namespace {

constexpr size_t kMaxDigits = 9;

size_t digits_at(const std::string& p, size_t i) {
  size_t n = 0;
  while (i + n < p.size() && std::isdigit(static_cast<unsigned char>(p[i + n]))) ++n;
  return n;
}

}  // namespace

std::regex compile_path_pattern(const std::string& pattern, std::regex::flag_type flags) {
  bool in_braces = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      if (digits_at(pattern, i + 1) > kMaxDigits)
        throw std::regex_error(std::regex_constants::error_backref);
      ++i;  // the escaped character is no brace
      continue;
    }
    if (c == '{') in_braces = true;
    if (c == '}') in_braces = false;
    if (in_braces && digits_at(pattern, i) > kMaxDigits)
      throw std::regex_error(std::regex_constants::error_badbrace);
  }
  return std::regex(pattern, flags);
}

}  // namespace profcollect
