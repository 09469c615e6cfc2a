// Fuzz target: the bytes of an .eh_frame section (mapper/eh_frame_ranges.h): CIEs, their
// augmentations and pointer encodings, FDEs, in both ELF classes and byte orders. Malformed
// entries end the walk; no exception is acceptable.
#include <cstddef>
#include <cstdint>

#include "mapper/eh_frame_ranges.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profcollect;
  if (size < 1) return 0;
  // The first byte picks the class and byte order; the section address makes pc-relative
  // pointers wrap at the top of the address space too.
  const bool is_64bit = data[0] & 1, little_endian = !(data[0] & 2);
  const uint64_t section_addr = (data[0] & 4) ? UINT64_MAX - 0xfff : 0x401000;
  const auto ranges = parse_eh_frame({data + 1, size - 1}, section_addr, is_64bit, little_endian);
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].start < ranges[i - 1].start) __builtin_trap();  // sorted, as promised
  return 0;
}
