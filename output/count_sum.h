// Sums of counts read from files, checked against 2^64: a file or a merge whose counts would
// wrap is refused, never silently wrong.
#pragma once

#include <cstdint>

namespace profcollect {

// a + b into `sum`; false when it would pass 2^64 - 1 (then `sum` is not to be used).
inline bool add_count(uint64_t& sum, uint64_t more) {
  return !__builtin_add_overflow(sum, more, &sum);
}

// a + b, or 2^64 - 1 when it would pass it: for sums that rank or weigh (a layout's counts), where
// the top is as good as any larger number.
inline uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

// A sum that says when it passed 2^64 instead of wrapping.
struct CheckedSum {
  uint64_t value = 0;
  bool overflow = false;
  void add(uint64_t more) { overflow |= !add_count(value, more); }
};

}  // namespace profcollect
