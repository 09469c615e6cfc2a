// The checks every numeric option goes through before its value is used. Each takes the text as
// typed and accepts only a plain decimal number inside the option's range, so that "-5" is not
// wrapped into a huge unsigned value, "inf", "nan" and "1e400" never become a flush interval, and
// a value the kernel or a later cast could not hold is refused while the user can still be told
// which option and which range. A refused value is a usage error (exit 2) naming the option.
#pragma once

#include "collector/host/setting_ranges.h"
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace profcollect {

// The ranges (collector/host/setting_ranges.h) are shared by the checks and the help text.

// A whole number written in decimal digits only (no sign, no exponent), min <= n <= max; the
// reason when it is not ("-5 is not a whole number from 1 to 1000000").
std::optional<std::string> check_whole_number(std::string_view text, uint64_t min, uint64_t max);
// A finite decimal number of seconds, min <= s <= max ("inf", "nan", "1e400" are refused).
std::optional<std::string> check_seconds(std::string_view text, double min, double max);
// A whole number from min to max that is a power of two.
std::optional<std::string> check_power_of_two(std::string_view text, uint64_t min, uint64_t max);

// The same as CLI11 validators, for add_option(...)->check(...). They add nothing to --help
// (CLI11 would print their description beside the value's name, as a type tag): the option's
// help and its error say the range.
CLI::Validator whole_number(uint64_t min, uint64_t max);
CLI::Validator seconds(double min, double max);
CLI::Validator power_of_two(uint64_t min, uint64_t max);

// perf's `-F max`: replaces the word with kernel.perf_event_max_sample_rate (at most `max`, the
// option's own limit), for add_option(...)->transform(...) before the whole_number check.
CLI::Validator frequency_word_max(uint64_t max);

// Seconds as a person reads them: "60 s", "0.25 s", "1.5 s".
std::string format_seconds(double s);

}  // namespace profcollect
