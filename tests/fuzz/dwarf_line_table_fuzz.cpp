// Fuzz target: the bytes of a .debug_line section (mapper/dwarf_line_table.h), each line program
// in it parsed in turn as its unit lengths chain them, and looked up at and around every row's
// address. The only acceptable failure is the std::runtime_error DwarfLineTable::parse throws
// for a malformed program.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

#include "mapper/dwarf_line_table.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace profcollect;

void check_table(const DwarfLineTable& table) {
  for (const LineRow& row : table.rows()) {
    for (uint64_t a : {row.address - 1, row.address, row.address + 1}) {
      const auto found = table.find(a);
      if (found && found->address > a) __builtin_trap();  // a row never lies above its query
    }
  }
}

// Where the next unit starts: after this one's initial length and length.
uint64_t next_unit(std::span<const uint8_t> bytes, uint64_t at) {
  auto fixed = [&](uint64_t pos, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= uint64_t{bytes[pos + i]} << (8 * i);
    return v;
  };
  if (bytes.size() - at < 4) return bytes.size();
  uint64_t length = fixed(at, 4);
  at += 4;
  if (length == 0xffffffffu) {
    if (bytes.size() - at < 8) return bytes.size();
    length = fixed(at, 8);
    at += 8;
  }
  return length > bytes.size() - at ? bytes.size() : at + length;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  for (uint64_t at = 0, units = 0; at < size && units < 64; at = next_unit(bytes, at), ++units) {
    try {
      check_table(DwarfLineTable::parse(bytes, at));
    } catch (const std::runtime_error&) {
    }
  }
  return 0;
}
