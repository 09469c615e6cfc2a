// The ranges of the numeric settings, wherever they arrive from: the command line
// (collector/cli/number_options.h), the daemon's configuration file (daemon_config.h) and its
// control socket (daemon.h). One table, so that a value one door refuses no other lets in.
#pragma once

#include <cstddef>
#include <cstdint>

namespace profcollect {

inline constexpr uint64_t kMaxFrequency = 1'000'000;          // samples per second
inline constexpr uint64_t kMaxPeriod = (uint64_t{1} << 62);   // events per sample
inline constexpr uint64_t kMaxMmapPages = uint64_t{1} << 20;  // 4 GiB of 4 KiB pages per buffer
inline constexpr uint64_t kMaxPid = 4'194'304;                // PID_MAX_LIMIT on 64-bit Linux
inline constexpr uint64_t kMaxTop = 1'000'000;
inline constexpr double kMinSeconds = 0.001;  // a duration: collection, a kernel profile
inline constexpr double kMaxSeconds = 366.0 * 24 * 3600;      // a year
inline constexpr uint64_t kMinBacklogMb = 1;                  // the drain backlog, MiB
inline constexpr uint64_t kMaxBacklogMb = uint64_t{1} << 20;  // a TiB

}  // namespace profcollect
