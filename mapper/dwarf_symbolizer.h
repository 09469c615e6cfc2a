// Address -> inline chain from DWARF, as llvm-symbolizer answers llvm-profgen 19
// (DWARFContext::getInliningInfoForAddress with linkage names, no symbol table):
//
// - The unit is the one whose DW_AT_ranges / low_pc-high_pc hold the address (for split DWARF
//   the skeleton's, with the DIEs read from its .dwo unit); where several units' ranges hold it,
//   the one LLVM's aranges choose (mapper/unit_address_ranges.h).
// - The innermost subroutine (DW_TAG_subprogram or DW_TAG_inlined_subroutine) whose ranges hold
//   the address, found the way LLVM's DWARFUnit address map finds it (later DIEs in pre-order
//   win), then its chain of DW_TAG_inlined_subroutine ancestors up to the DW_TAG_subprogram.
// - Each frame's name is DW_AT_linkage_name, else DW_AT_name, followed through
//   DW_AT_abstract_origin / DW_AT_specification; its first line is DW_AT_decl_line likewise.
// - The innermost frame's line and discriminator come from the line table; every outer frame's
//   from the DW_AT_call_line and DW_AT_GNU_discriminator of the inlined subroutine it calls.
//
// Frames are returned OUTERMOST FIRST (the function the code is in, then what it inlined, down to
// the leaf). A frame without any name ends the chain there, as llvm-profgen stops at LLVM's
// "<invalid>" name; an address in no subroutine gives an empty chain.
//
// Construction walks every unit once for its functions (llvm-profgen groups functions by name over
// all units, so no unit can be left out), skipping the subtrees that cannot hold a subprogram with
// code: inlined subroutines, parameters, call sites, declarations. A unit's inlined subroutines --
// most of its DIEs -- are walked only when an address in it is asked about.
//
// The first kMaxKeptAnswers answers are kept: symbolizing such an address again is a hash
// lookup, also after drop_caches() (a symbolizer kept for a long run, the daemon's, answers the
// addresses its earlier flushes met without reading a unit again, and holds a bounded amount).
// A unit's address map and line table are built when an address in it is first asked about,
// and only the kMaxDecodedUnits units decoded last keep theirs: ask unit by unit (unit_of()).
// Names point into the DWARF string sections and live as long as the symbolizer. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mapper/dwarf_file.h"
#include "mapper/dwarf_function_index.h"
#include "mapper/unit_address_ranges.h"

namespace profcollect {

struct InlineFrame {
  std::string_view name;       // as in DWARF (a mangled linkage name, or a plain name)
  uint32_t decl_line = 0;      // DW_AT_decl_line of the (abstract) subprogram, 0 if absent
  uint32_t line = 0;           // source line of this frame at the address
  uint32_t discriminator = 0;  // raw DWARF discriminator of that line
};

using InlineStack = std::vector<InlineFrame>;  // outermost first

class DwarfSymbolizer {
 public:
  // Units that keep their address map and line table at once: one, as the renders ask unit by
  // unit (their pieces of code and their call sites grouped by unit_of()), so a unit left is not
  // asked about again in the same render.
  static constexpr size_t kMaxDecodedUnits = 1;
  // The construction's walk of every unit lets the pages it read go each time it has read this
  // much more (ElfBinary::unmap_file_pages), and so does symbolizing each time it lets units go.
  static constexpr uint64_t kWalkedBytesKeptResident = 2 << 20;
  // Answers kept (about 100 bytes each: an address, and its share of the inline stacks
  // consecutive addresses share); past them an answer is computed each time it is asked for.
  static constexpr size_t kMaxKeptAnswers = size_t{1} << 18;

  enum class Answers { Keep, Forget };
  // What symbolizing has cost so far: addresses answered from DWARF (not from the cache), and
  // walks of DIEs for an address map (an outer subprogram's subtree, or a whole unit's).
  struct Counts {
    uint64_t addresses = 0;
    uint64_t unit_walks = 0;
  };

  // Reads the unit headers and their address ranges, and indexes every unit's functions: with
  // `threads` 2 or more, the second half of the units on a second thread through a handle of its
  // own (DwarfFile::reopen; one thread when that fails). `preferred_base` is the binary's
  // (ElfBinary::preferred_base()): subprogram ranges below it are discarded code.
  // Throws DebugInfoError: MissingSplitDwarf when skeleton units have no .dwo found, Unreadable.
  // `kept_answers`: at most this many answers are kept (0 for a one-shot render that asks each
  // address once).
  DwarfSymbolizer(std::unique_ptr<DwarfFile> file, uint64_t preferred_base, unsigned threads = 1,
                  size_t kept_answers = kMaxKeptAnswers);
  ~DwarfSymbolizer();
  DwarfSymbolizer(const DwarfSymbolizer&) = delete;
  DwarfSymbolizer& operator=(const DwarfSymbolizer&) = delete;

  // The inline stack at the address. Valid until the next call, or longer when it was kept: up
  // to kept_answers answers are kept (then until drop_caches() lets them go).
  const InlineStack& symbolize(uint64_t address) const;
  // The unit an address is symbolized in, if any: asking unit by unit decodes each unit once
  // however the units' code interleaves (each unit's .text.hot, .text.unlikely, ... parts).
  std::optional<uint32_t> unit_of(uint64_t address) const;
  // A unit's DW_AT_name, the source file as the compiler was given it ("" when it has none):
  // what LLVM names a module by in a basic-block sections profile.
  std::string unit_name(uint32_t unit) const;
  // Frees every unit's address map and line table (built again on demand) and, when asked to,
  // the answers kept; then it invalidates the InlineStacks returned before (not the names they
  // hold).
  void drop_caches(Answers answers = Answers::Keep);

  const DwarfFunctionIndex& functions() const { return functions_; }
  const DwarfFile& file() const { return *file_; }
  size_t unit_count() const { return units_.size(); }
  size_t cached_addresses() const { return cache_.size(); }
  // Units whose address map or line table is built (what drop_caches() frees).
  size_t decoded_units() const;
  Counts counts() const { return counts_; }
  // The first line table that could not be read ("" when none): its units' lines read as 0.
  const std::string& line_table_error() const { return line_table_error_; }

 private:
  struct Unit;

  // What one thread's walk found in a run of units: their subprograms with code, in order, and
  // each unit's outer subprograms.
  // An address range of one of a unit's outer subprograms (its index among them).
  struct OuterRange {
    uint64_t begin = 0, end = 0;
    uint32_t outer = 0;
  };
  struct IndexedRun {
    struct Subprogram {
      std::string_view name;         // in the DWARF of the handle the run was walked with
      uint32_t first_range, ranges;  // in `ranges`
    };
    std::vector<Subprogram> subprograms;  // of every unit of the run, in order
    std::vector<AddressRange> ranges;
    // Per unit of the run: its outer subprograms (with code, enclosed by no other) in pre-order,
    // and their address ranges.
    struct Outers {
      std::vector<Dwarf_Off> offsets;
      std::vector<OuterRange> ranges;
    };
    std::vector<Outers> outer;
  };
  void scan_units();
  void index_all_functions();
  // Indexes the units whose DIE trees are given, in order, into `run`; `file` is the ELF file
  // of the handle they were read through, whose pages it lets go.
  void index_run(const std::vector<Dwarf_Die>& code_dies, const ElfBinary& file,
                 IndexedRun& run) const;
  void index_functions(Dwarf_Die code_die, IndexedRun& run) const;
  Unit* unit_for(uint64_t address) const;
  // Makes the unit's address map ready for `address`, counting the walk when one is needed.
  void map_unit(Unit* unit, uint64_t address) const;
  // Before `unit` is decoded: frees the units decoded longest ago beyond kMaxDecodedUnits.
  void make_room_for(const Unit* unit) const;
  InlineStack compute(uint64_t address) const;

  std::unique_ptr<DwarfFile> file_;
  uint64_t preferred_base_;
  unsigned threads_ = 1;
  std::vector<std::unique_ptr<Unit>> units_;
  // Which unit an address is symbolized in: disjoint, sorted (mapper/unit_address_ranges.h).
  std::vector<UnitAddressRange> unit_ranges_;
  DwarfFunctionIndex functions_;
  mutable Counts counts_;
  std::span<const uint8_t> debug_line_;
  mutable std::string line_table_error_;
  mutable std::unordered_map<uint64_t, uint32_t> cache_;  // address -> index in stacks_
  // The inline stacks found, a stack shared by consecutive addresses once. A deque: a stack
  // handed out stays where it is while more are added.
  mutable std::deque<InlineStack> stacks_;
  size_t kept_answers_;
  uint64_t lowest_code_ = UINT64_MAX;  // of the binary's executable sections
  mutable InlineStack unkept_;         // the last answer not kept
  // Units whose address map or line table is built, oldest first; at most kMaxDecodedUnits.
  mutable std::deque<uint32_t> decoded_;
};

}  // namespace profcollect
