// Counts the heap allocations made through operator new while a test asks for it, to check that
// a hot path allocates nothing per record once warm. The replacement of the global operator new
// and delete that makes this possible lives in allocation_counter.cpp, linked once into each test
// binary; it replaces every form (plain, array, nothrow, aligned, sized), so that whatever a
// library allocates is released by the matching form, as AddressSanitizer checks.
#pragma once

#include <cstddef>

namespace profcollect::test {

class AllocationCounter {
 public:
  // Counting starts at construction and stops at stop() or destruction. Counters do not nest.
  AllocationCounter();
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;

  void pause();
  void resume();
  void stop() { pause(); }
  // Allocations counted so far (while not paused).
  size_t count() const;
};

}  // namespace profcollect::test
