// A Propeller profile: what clang's -fbasic-block-sections=list= and lld's
// --symbol-ordering-file take to relink a binary with its hot blocks clustered and its hot
// functions together, made from a branch profile and the binary's basic-block address map
// (mapper/bb_addr_map.h; the binary was built with -fbasic-block-address-map).
//
// 1. Each branch and fall-through range is laid on the map's blocks: a taken branch inside a
//    function to the start of one of its blocks is an edge from the block holding the branch; a
//    branch to a function's entry is a call; a fall-through range is an edge between each pair of
//    consecutive blocks it crosses (ranges across functions or their ranges are left out). A
//    block's count is the larger of what enters and what leaves it (a range within one block
//    counts too), so that a stack's first and last ranges, cut by the stack's ends, still count.
// 2. Blocks that ran are hot or warm. Hot are: each function's entry block; the binary's most-run
//    blocks, those that together hold 98.5% of the bytes run (a block's count times its size),
//    with every block that ran as often as the least-run of them; and a block that ran in at
//    least one in ten of its function's runs (its count against its entry block's). The other
//    blocks that ran are warm. Each function with counts gets a hot cluster, its entry block
//    first, and, when it has warm blocks, a warm one (clang names it `NAME.__part.1`); each
//    cluster's blocks are in the order the ext-TSP objective prefers (output/block_layout.h) over
//    the edges within it. Blocks that did not run go to the function's cold section, `NAME.cold`.
//    Why warm: a block run in a few of its function's runs still takes its bytes in the hot
//    code's cache lines; laid out after every hot part, the warm blocks leave the hot code
//    denser. But each run of a warm block costs a jump there and back, and most likely a miss
//    of its own line: a block that runs in one call in ten or more is better among the lines
//    its function's calls fetch anyway. BOLT splits a function in two only. The two figures
//    were measured on the Propeller bench's three programs (docs/propeller.md): with both, the
//    relinked programs miss less than with BOLT's layout; with the share alone, one of them
//    did not.
// 3. The functions' order for the linker: call-chain clustering over the hot parts' calls
//    (output/function_order.h), then the warm parts in the same order, then the cold parts (as
//    create_llvm_prof writes them).
//
// The cluster file is LLVM 19's version 1 (BasicBlockSectionsProfileReader): `v1`, then per
// function `f NAME` and `c ID ID ...`. Functions are named by their symbol. A name that several
// functions share (static functions of different files) is preceded by `m MODULE`, the name of
// the function's compile unit as its debug info gives it (what clang compares with the module's
// own), when every function of that name has a module of its own; else it is left out (the file
// would give all of them the same clusters). The linker's order lists such a name once: lld
// places every symbol of the name there.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "mapper/bb_addr_map.h"
#include "mapper/symbol_table.h"
#include "output/branch_profile.h"
#include "output/ip_profile.h"

namespace profcollect {

struct PropellerStats {
  uint64_t functions = 0;          // functions with a cluster
  uint64_t blocks = 0;             // blocks in their clusters (hot and warm)
  uint64_t warm_parts = 0;         // of those functions, with a warm cluster
  uint64_t warm_blocks = 0;        // of the blocks, in warm clusters
  uint64_t cold_parts = 0;         // of those functions, with blocks left cold
  uint64_t unnamed_functions = 0;  // with counts, left out: no symbol or a shared local name
  uint64_t module_named = 0;       // with a cluster, named with their module (`m`)
  uint64_t branches_mapped = 0;    // taken branches (counts) laid on edges or calls
  uint64_t branches_unmapped = 0;  // outside the map, or into a block's middle (returns)
  uint64_t ranges_mapped = 0;      // fall-through ranges (counts) laid on blocks
  uint64_t ranges_unmapped = 0;    // across functions, or outside the map
  uint64_t samples = 0;            // the binary's IP samples
  uint64_t covered_samples = 0;    // of them, in the functions with a cluster
};

struct PropellerProfile {
  std::string clusters;      // cc_profile.txt
  std::string symbol_order;  // ld_profile.txt
  PropellerStats stats;
};

struct PropellerOptions {
  // The share of the bytes run that the binary's most-run blocks, hot, hold (see 2. above); 1
  // makes every block that ran hot (one cluster per function).
  double hot_share = 0.985;
  // A block that ran in at least this share of its function's runs is hot too (see 2. above).
  double runs_share_kept_hot = 0.1;
};

// The name of the compile unit holding an address ("" when unknown).
using ModuleNameOf = std::function<std::string(uint64_t address)>;

// `ips` (may be null) gives the samples share. `module_of` (may be empty) is asked only about
// functions whose name others share.
PropellerProfile make_propeller_profile(const BranchProfile& branches, const BbAddrMap& map,
                                        const SymbolTable& symbols, const IpProfile* ips,
                                        const ModuleNameOf& module_of = {},
                                        const PropellerOptions& options = {});

}  // namespace profcollect
