// The checks every numeric option goes through before its value is used. Each takes the text as
// typed and accepts only a plain decimal number inside the option's range, so that "-5" is not
// wrapped into a huge unsigned value, "inf", "nan" and "1e400" never become a flush interval, and
// a value the kernel or a later cast could not hold is refused while the user can still be told
// which option and which range. A refused value is a usage error (exit 2) naming the option.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace profcollect {

// The ranges, shared by the checks and the help text.
inline constexpr uint64_t kMaxFrequency = 1'000'000;        // samples per second
inline constexpr uint64_t kMaxPeriod = (uint64_t{1} << 62);  // events per sample
inline constexpr uint64_t kMaxMmapPages = uint64_t{1} << 20; // 4 GiB of 4 KiB pages per buffer
inline constexpr uint64_t kMaxPid = 4'194'304;               // PID_MAX_LIMIT on 64-bit Linux
inline constexpr uint64_t kMaxTop = 1'000'000;
inline constexpr double kMinSeconds = 0.001;
inline constexpr double kMaxSeconds = 366.0 * 24 * 3600;  // a year

// A whole number written in decimal digits only (no sign, no exponent), min <= n <= max; the
// reason when it is not ("-5 is not a whole number from 1 to 1000000").
std::optional<std::string> check_whole_number(std::string_view text, uint64_t min, uint64_t max);
// A finite decimal number of seconds, min <= s <= max ("inf", "nan", "1e400" are refused).
std::optional<std::string> check_seconds(std::string_view text, double min, double max);
// A whole number from min to max that is a power of two.
std::optional<std::string> check_power_of_two(std::string_view text, uint64_t min, uint64_t max);

// The same as CLI11 validators, for add_option(...)->check(...).
CLI::Validator whole_number(uint64_t min, uint64_t max);
CLI::Validator seconds(double min, double max);
CLI::Validator power_of_two(uint64_t min, uint64_t max);

// Seconds as a person reads them: "60 s", "0.25 s", "1.5 s".
std::string format_seconds(double s);

}  // namespace profcollect
