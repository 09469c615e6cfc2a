// Fuzz target: the bytes of an SHT_LLVM_BB_ADDR_MAP section (mapper/bb_addr_map.h), decoded
// without an ELF file around them, then every lookup the model offers on what was decoded. The
// first byte picks the encoding (bit 0: 4-byte addresses, bit 1: big-endian); the rest is the
// section. The only acceptable failure is BbAddrMapError, and what decodes must keep the model's
// promises: ranges never empty, blocks in order inside their range, one PGO entry per block.
#include <cstddef>
#include <cstdint>

#include "mapper/bb_addr_map.h"

namespace {

using namespace profcollect;

// Bounds the work per input: enough blocks to reach every path, not so many that one input of
// thousands of empty ranges makes the run slow.
constexpr size_t kMaxLookups = 4096;

void check(const BbAddrMap& map) {
  size_t lookups = 0;
  for (const BbFunction& f : map.functions()) {
    if (f.ranges.empty()) __builtin_trap();
    if (map.function_at(f.address()) == nullptr) __builtin_trap();
    if (f.features.has_pgo_blocks() ? f.pgo_blocks.size() != f.block_count()
                                    : !f.pgo_blocks.empty())
      __builtin_trap();
    for (const BbRange& r : f.ranges) {
      if (r.end() < r.address) __builtin_trap();
      for (size_t i = 0; i < r.blocks.size(); ++i) {
        const BbBlock& b = r.blocks[i];
        if (i > 0 && b.offset < r.blocks[i - 1].end()) __builtin_trap();
        if (++lookups > kMaxLookups) return;
        const BbLocation at = map.find(r.address + b.offset);
        // Another function's range may start between, so the block found need not be this one;
        // but a block found must hold the address.
        if (at.block != nullptr && (at.range == nullptr || at.function == nullptr ||
                                    r.address + b.offset < at.range->address + at.block->offset ||
                                    r.address + b.offset >= at.range->address + at.block->end()))
          __builtin_trap();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const BbAddrMapEncoding encoding{static_cast<uint8_t>(data[0] & 1 ? 4 : 8), !(data[0] & 2)};
  try {
    check(BbAddrMap::decode({data + 1, size - 1}, encoding));
  } catch (const BbAddrMapError&) {
  }
  return 0;
}
