// A clock's current time in nanoseconds, for sample times (CLOCK_MONOTONIC, what the perf
// events are told to stamp) and their conversion to wall-clock time (CLOCK_REALTIME).
#pragma once

#include <time.h>

#include <cstdint>

namespace profcollect {

inline uint64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace profcollect
