#include "collector/cli/number_options.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "collector/live/event_selection.h"

namespace profcollect {

namespace {

std::string range_text(uint64_t min, uint64_t max) {
  return std::to_string(min) + " to " + std::to_string(max);
}

std::string seconds_range_text(double min, double max) {
  return format_seconds(min) + " to " + format_seconds(max);
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace

std::optional<std::string> check_whole_number(std::string_view text, uint64_t min, uint64_t max) {
  const std::string why = quoted(text) + " is not a whole number from " + range_text(min, max);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return why;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max)
    return why;
  return std::nullopt;
}

std::optional<std::string> check_seconds(std::string_view text, double min, double max) {
  const std::string why =
      quoted(text) + " is not a number of seconds from " + seconds_range_text(min, max);
  // Digits with at most one decimal point: no sign, exponent, hex, "inf" or "nan".
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos ||
      text.find('.') != text.rfind('.') || text == ".") {
    return why;
  }
  const std::string copy(text);
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (errno != 0 || end != copy.c_str() + copy.size() || !std::isfinite(value) || value < min ||
      value > max) {
    return why;
  }
  return std::nullopt;
}

std::optional<std::string> check_power_of_two(std::string_view text, uint64_t min, uint64_t max) {
  if (auto why = check_whole_number(text, min, max)) return why;
  uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  if ((value & (value - 1)) != 0)
    return quoted(text) + " is not a power of two (1, 2, 4, ... " + std::to_string(max) + ")";
  return std::nullopt;
}

CLI::Validator whole_number(uint64_t min, uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& s) {
        return check_whole_number(s, min, max).value_or(std::string());
      },
      "");
}

CLI::Validator seconds(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& s) { return check_seconds(s, min, max).value_or(std::string()); },
      "");
}

CLI::Validator power_of_two(uint64_t min, uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& s) {
        return check_power_of_two(s, min, max).value_or(std::string());
      },
      "");
}

CLI::Validator frequency_word_max(uint64_t max) {
  return CLI::Validator(
      [max](std::string& s) {
        if (s != "max") return std::string();
        const std::optional<uint64_t> limit = read_max_sample_rate();
        if (!limit || *limit == 0) {
          return std::string(
              "max: kernel.perf_event_max_sample_rate cannot be read, so the highest rate is "
              "unknown");
        }
        s = std::to_string(std::min(*limit, max));
        return std::string();
      },
      "");
}

std::string format_seconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  // %.3g prints a year as 3.16e+07: whole numbers are written out.
  if (s >= 1000 && s == std::floor(s)) std::snprintf(buf, sizeof buf, "%.0f s", s);
  return buf;
}

}  // namespace profcollect
