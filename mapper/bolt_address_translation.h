// BOLT address translation (BAT): the tables `llvm-bolt --enable-bat` leaves in the binary it
// writes (section .note.bolt_bat), which take an address of the BOLTed binary back to the input
// binary's function and offset, so that samples of the optimized binary can profile the next
// build. The encoding (LLVM 19's bolt/lib/Profile/BoltAddressTranslation.cpp, checked against
// llvm-bolt-19's output): an ELF note (name "BOLT", type 1) whose description holds
//
//   hot functions:  ULEB count, then per function
//     address (ULEB delta from the previous address written, fragments and entries included),
//     function hash (8 bytes), input basic blocks (ULEB), secondary entry points (ULEB),
//     entries (ULEB), leading entries whose input offset equals the output one (ULEB), their
//     branch bits (a bitmask rounded up to bytes), then per entry: output offset (ULEB delta of
//     the address), input offset with the branch bit as its lowest bit (SLEB delta, absent for
//     the leading equal entries), and for a block entry its hash (8 bytes) and block index
//     (ULEB delta, modulo 2^64); then the secondary entry points' input offsets (ULEB deltas);
//   cold fragments: ULEB count, then per fragment
//     address (ULEB delta), its hot function's index in the hot table (ULEB delta), the input
//     skew of its equal entries (ULEB: input offset = output offset + skew), entries (ULEB),
//     equal entries (ULEB), branch bits, and the entries as above.
//
// An entry maps the start of an output block (or of a branch or call, "branch" set) to its input
// offset. Every count and offset read is checked against what is left of the section before it
// is used: a damaged table is an error, never a read past its end.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "mapper/elf_binary.h"

namespace profcollect {

struct BatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct BatEntry {
  uint64_t output_offset = 0;  // from the fragment's start in the BOLTed binary
  uint64_t input_offset = 0;   // from the input function's start
  bool branch = false;         // a branch or call instruction; else the start of a block
  // The start of the next input block after input_offset (of any fragment of the function),
  // UINT64_MAX when none: code of the output block past the entry that would translate beyond
  // it is code BOLT added (the jump a moved fall-through needs) or re-encoded (translate()).
  uint64_t input_block_end = UINT64_MAX;
};

// One fragment of a function in the BOLTed binary: the hot part, or a cold one split off.
struct BatFragment {
  uint64_t address = 0;      // its start in the BOLTed binary
  uint64_t hot_address = 0;  // its function's hot fragment (its own address when hot)
  bool cold = false;
  uint64_t hash = 0;                        // hot only: BOLT's hash of the input function
  uint64_t blocks = 0;                      // hot only: basic blocks of the input function
  std::vector<uint64_t> secondary_entries;  // hot only: input offsets of other entry points
  std::vector<BatEntry> entries;            // by output offset; equal ones in table order
};

class BoltAddressTranslation {
 public:
  static constexpr const char* kSectionName = ".note.bolt_bat";

  // The binary's table, or nullopt when it has none. Throws BatError for a damaged one.
  static std::optional<BoltAddressTranslation> load(const ElfBinary& binary);
  // The section's bytes (the whole note). Throws BatError saying what is wrong and where.
  static BoltAddressTranslation parse(std::span<const uint8_t> note);

  // The fragment that starts at `address`, or null (a function BOLT did not rewrite).
  const BatFragment* fragment(uint64_t address) const;
  const std::vector<BatFragment>& fragments() const { return fragments_; }  // by address
  size_t hot_functions() const { return hot_functions_; }
  size_t cold_fragments() const { return fragments_.size() - hot_functions_; }

  // The input offset of `offset` in the fragment, as perf2bolt 19 translates it: the entry at or
  // before it gives the input offset of its start, and the distance from there is kept -- except
  // for a branch source, which becomes the entry's own input offset (a block's start, or the
  // branch itself when BAT lists it), because BOLT may have changed the instructions before it.
  // One departure from perf2bolt: where keeping the distance would pass the start of the next
  // input block, the result is that start. Such code is code BOLT added -- the jump after a
  // branch or call whose fall-through block it moved away, a jump to that very block, which
  // begins at the next input block's start -- or code after an instruction BOLT lengthened
  // (a short branch made near). perf2bolt gives an offset inside some other instruction there,
  // and when the distance lands exactly on the next block's start it gives what this gives.
  // An offset before the first entry is returned as it is.
  static uint64_t translate(const BatFragment& fragment, uint64_t offset, bool branch_source);

  // The block-to-block fall-throughs of a range executed without a taken branch, from `from` to
  // `to` (offsets in the fragment), as perf2bolt 19 finds them in BAT: pairs (output offset of a
  // block's start, output offset of the next block's start) for each block boundary the range
  // crosses, in the output layout; the two are equal where entries share an output offset (an
  // empty block), as perf2bolt's are. Appends to `out` (cleared first); none when from >= to.
  static void fall_throughs(const BatFragment& fragment, uint64_t from, uint64_t to,
                            std::vector<std::pair<uint64_t, uint64_t>>& out);

 private:
  void mark_input_blocks();  // sets every entry's input_block_end

  std::vector<BatFragment> fragments_;
  size_t hot_functions_ = 0;
};

}  // namespace profcollect
