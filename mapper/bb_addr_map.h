// LLVM's basic-block address map: the section of type SHT_LLVM_BB_ADDR_MAP (0x6fff4c0a, named
// .llvm_bb_addr_map) that clang writes with -fbasic-block-address-map (or
// -fbasic-block-sections=...), listing each function's basic blocks by the IDs the compiler gave
// them -- what a Propeller profile names blocks by, and what maps a sampled address to a block
// without disassembling.
//
// The encoding, as LLVM 19 writes it (AsmPrinter::emitBBAddrMapSection) and reads it
// (ELFFile::decodeBBAddrMap; llvm-readobj-19 --bb-addr-map is the judge the tests use): one entry
// per function, one after the other to the section's end, each
//
//   version (1 byte: 0, 1 or 2; LLVM 19 writes 2), features (1 byte, zero below version 2):
//     bit 0 function entry count, bit 1 block frequencies, bit 2 branch probabilities,
//     bit 3 several ranges; other bits are invalid;
//   without "several ranges": the function's address (a target address: 4 or 8 bytes in the
//     file's byte order), then its number of blocks (ULEB);
//   with it: the number of ranges (ULEB, not zero), then per range its address and its number of
//     blocks as above -- a function cut into sections by -fbasic-block-sections, the first range
//     holding the entry;
//   after each range's header, its blocks, in address order: ID (ULEB, version 2 only; below,
//     the block's index), offset (ULEB: from the end of the range's previous block from version
//     1 on, from the range's start in version 0), size (ULEB), metadata (ULEB: bit 0 has return,
//     1 has tail call, 2 is EH pad, 3 can fall through, 4 has indirect branch; other bits are
//     invalid); IDs, offsets, sizes and metadata are 32-bit values;
//   then, with PGO analysis features (-mllvm -pgo-analysis-map=...): the function's entry count
//     (ULEB, 64 bits) when bit 0 is set; when bit 1 or 2 is, per block of every range in order
//     its frequency (ULEB, 64 bits; bit 1) and its successors (bit 2: a ULEB count, then per
//     successor its block ID and its probability, the numerator of a fraction of 2^31, ULEBs).
//
// Only sections of that type are read (llvm-readobj-19 reads no other): the older
// SHT_LLVM_BB_ADDR_MAP_V0 type is refused. In a linked executable or shared object the
// addresses are the functions' own; in a relocatable object (.o) they are relocations, which
// this reader does not apply: it refuses such files.
//
// Stricter than LLVM where LLVM lets damage through: a block offset that passes 4 GiB (LLVM
// wraps it), a range that passes the end of the address space, and version 0 blocks out of
// address order or overlapping (which no LLVM wrote) are errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mapper/elf_binary.h"

namespace profcollect {

inline constexpr uint32_t kShtLlvmBbAddrMap = 0x6fff4c0a;    // SHT_LLVM_BB_ADDR_MAP
inline constexpr uint32_t kShtLlvmBbAddrMapV0 = 0x6fff4c08;  // SHT_LLVM_BB_ADDR_MAP_V0 (old)

// Why a binary's block address map cannot be had. The message is complete on its own (it names
// the file, and for damage the section and the byte where it was found); `kind` lets a caller
// tell "not built for it" (ask for -fbasic-block-address-map) from a broken file.
class BbAddrMapError : public std::runtime_error {
 public:
  enum class Kind {
    NotBuiltWithAddressMap,  // no SHT_LLVM_BB_ADDR_MAP section
    Relocatable,             // an ET_REL file: its addresses are relocations not applied here
    // A version above 2 (the message names it), only the old SHT_LLVM_BB_ADDR_MAP_V0 type, or
    // a compressed section.
    Unsupported,
    Malformed,  // damaged or cut short; section_offset() says where
  };
  static constexpr uint64_t kNoOffset = UINT64_MAX;

  BbAddrMapError(Kind kind, const std::string& message, uint64_t section_offset = kNoOffset)
      : std::runtime_error(message), kind_(kind), section_offset_(section_offset) {}
  Kind kind() const { return kind_; }
  // The byte of the section where the damage was found, or kNoOffset.
  uint64_t section_offset() const { return section_offset_; }

 private:
  Kind kind_;
  uint64_t section_offset_;
};

struct BbAddrMapFeatures {
  bool func_entry_count = false;  // bit 0
  bool bb_freq = false;           // bit 1
  bool br_prob = false;           // bit 2
  bool multi_bb_range = false;    // bit 3
  bool has_pgo() const { return func_entry_count || bb_freq || br_prob; }
  bool has_pgo_blocks() const { return bb_freq || br_prob; }
  bool operator==(const BbAddrMapFeatures&) const = default;
};

struct BbBlock {
  uint32_t id = 0;
  uint32_t offset = 0;  // from its range's start
  uint32_t size = 0;
  bool has_return = false;           // ends in a return (or a tail call)
  bool has_tail_call = false;        // ends in a tail call
  bool is_eh_pad = false;            // an exception landing pad
  bool can_fall_through = false;     // may go on to the block laid out after it
  bool has_indirect_branch = false;  // ends in a branch through a register
  uint64_t end() const { return uint64_t{offset} + size; }
};

// A contiguous run of a function's blocks: the whole function, or one of its basic-block
// sections (with -fbasic-block-sections the cold part lies elsewhere in .text).
struct BbRange {
  uint64_t address = 0;
  std::vector<BbBlock> blocks;  // by offset
  // One past its last block's last byte (its address when it has no blocks).
  uint64_t end() const { return blocks.empty() ? address : address + blocks.back().end(); }
};

struct BbSuccessor {
  uint32_t id = 0;           // the successor block's ID
  uint32_t probability = 0;  // numerator of probability / 2^31 (LLVM's BranchProbability)
};

struct BbPgoBlock {
  uint64_t frequency = 0;  // relative to the entry block's, as LLVM's BlockFrequency holds it
  std::vector<BbSuccessor> successors;
};

struct BbFunction {
  uint8_t version = 0;
  BbAddrMapFeatures features;
  std::vector<BbRange> ranges;  // never empty; the first starts at the function's entry
  uint64_t entry_count = 0;     // with features.func_entry_count, else 0
  // With features.has_pgo_blocks(): one per block, the ranges' blocks in order; else empty.
  std::vector<BbPgoBlock> pgo_blocks;
  uint64_t section_offset = 0;  // where its entry begins in its section (for messages)

  uint64_t address() const { return ranges.front().address; }
  size_t block_count() const;
};

// Where an address lies: its function, the range of it, and the block (null in the padding
// between blocks, which belongs to no block).
struct BbLocation {
  const BbFunction* function = nullptr;
  const BbRange* range = nullptr;
  const BbBlock* block = nullptr;
};

// How the target encodes an address: what the ELF header says.
struct BbAddrMapEncoding {
  uint8_t address_size = 8;  // 4 for ELFCLASS32
  bool little_endian = true;
};

class BbAddrMap {
 public:
  // The maps of every SHT_LLVM_BB_ADDR_MAP section of the binary. Throws BbAddrMapError:
  // NotBuiltWithAddressMap when it has none, Relocatable for an ET_REL file, Unsupported,
  // Malformed (naming the file, the section and the byte).
  static BbAddrMap load(const ElfBinary& binary);
  // One section's bytes. Throws BbAddrMapError (Unsupported or Malformed), whose message begins
  // with `where` ("FILE: section NAME", say) when it is given; std::invalid_argument for an
  // address size other than 4 or 8.
  static BbAddrMap decode(std::span<const uint8_t> section, BbAddrMapEncoding encoding,
                          std::string_view where = {});

  // In section order (the order the linker laid them out).
  const std::vector<BbFunction>& functions() const { return functions_; }

  // The function whose entry is at `address`, or null.
  const BbFunction* function_at(uint64_t address) const;
  // The function, range and block holding `address`; a null function when no range holds it.
  // When ranges overlap (functions folded by identical code folding share their code), the one
  // starting last at or before the address is taken, the first of the section among equal ones.
  BbLocation find(uint64_t address) const;

 private:
  // A range in the address index: [start, end) and where it comes from.
  struct RangeRef {
    uint64_t start = 0, end = 0;
    uint32_t function = 0, range = 0;
  };
  void append(BbAddrMap&& other);
  void build_index();

  std::vector<BbFunction> functions_;
  std::vector<RangeRef> by_address_;   // ranges sorted by start, stable
  std::vector<uint32_t> by_function_;  // function indices sorted by entry address, stable
};

}  // namespace profcollect
