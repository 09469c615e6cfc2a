// Hexadecimal text of an address or offset, as profiles and messages write it: one helper, so that
// every file spells it the same way.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

namespace profcollect {

// "1a2b": the digits alone, as BOLT's fdata and perf script write addresses.
inline std::string hex_digits(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%" PRIx64, value);
  return buffer;
}

// "0x1a2b", as messages name an address.
inline std::string hex_address(uint64_t value) {
  char buffer[19];
  std::snprintf(buffer, sizeof buffer, "0x%" PRIx64, value);
  return buffer;
}

}  // namespace profcollect
