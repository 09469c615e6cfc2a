// Fuzz target: a BOLT address translation note (.note.bolt_bat) as a BOLTed binary carries it
// (mapper/bolt_address_translation.h). A damaged table must be refused with its reason, never
// read past its end; a table that parses must hold what the translation relies on: entries in
// output order, cold fragments pointing at hot ones, and fall-throughs from a block to a block no
// earlier (the same output offset when entries share one, as an empty block's does).
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "mapper/bolt_address_translation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profcollect;
  std::optional<BoltAddressTranslation> bat;
  try {
    bat.emplace(BoltAddressTranslation::parse(std::span<const uint8_t>(data, size)));
  } catch (const BatError& e) {
    if (std::string(e.what()).empty()) __builtin_trap();  // a refusal says why
    return 0;
  }
  std::vector<std::pair<uint64_t, uint64_t>> boundaries;
  for (const BatFragment& f : bat->fragments()) {
    if (bat->fragment(f.address) != &f) __builtin_trap();
    if (f.cold) {
      const BatFragment* hot = bat->fragment(f.hot_address);
      if (hot == nullptr || hot->cold) __builtin_trap();
    } else if (f.hot_address != f.address) {
      __builtin_trap();
    }
    for (size_t i = 1; i < f.entries.size(); ++i) {
      if (f.entries[i].output_offset < f.entries[i - 1].output_offset) __builtin_trap();
    }
    // Every entry's offset and its neighbours, as sample addresses and range ends.
    for (size_t i = 0; i < f.entries.size() && i < 64; ++i) {
      const uint64_t at = f.entries[i].output_offset;
      for (uint64_t offset : {at, at + 1, at ? at - 1 : 0}) {
        BoltAddressTranslation::translate(f, offset, false);
        BoltAddressTranslation::translate(f, offset, true);
      }
      for (size_t j = 0; j < f.entries.size() && j < 64; ++j) {
        BoltAddressTranslation::fall_throughs(f, at, f.entries[j].output_offset + 1, boundaries);
        for (const auto& [from, to] : boundaries) {
          if (from > to) __builtin_trap();
        }
      }
    }
  }
  return 0;
}
