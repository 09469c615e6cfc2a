// make_propeller_profile on hand-encoded address maps, with counts worked out by hand: branches
// and ranges laid on blocks, clusters by block ID with the entry first and cold blocks left out,
// calls ordering callees after callers, cold parts last, unmapped branches and ranges counted,
// names two functions share told apart by their modules or left out.
#include <gtest/gtest.h>

#include "mapper/symbol_table.h"
#include "output/propeller_profile.h"
#include "tests/unit/bb_addr_map_encoder.h"

namespace profcollect {
namespace {

using namespace bb_addr_map_encoding;

// f at 0x1000: block 0 [0x0, 0x10) (calls g at 0x1005, branches at 0xc), block 1 [0x10, 0x18)
// (branches at 0x14), block 2 [0x18, 0x20) (never runs), block 3 [0x20, 0x24) (returns);
// g at 0x2000: one block of 0x10 that returns. IDs as a compiler numbers them: not in address
// order.
BbAddrMap two_functions() {
  Encoder e;
  e.header(2, 0).address(0x1000).uleb(4);
  e.block(0, 0, 0x10, kFallThrough).block(3, 0, 8, kFallThrough).block(1, 0, 8, kFallThrough);
  e.block(2, 0, 4, kReturn);
  e.header(2, 0).address(0x2000).uleb(1).block(0, 0, 0x10, kReturn);
  return BbAddrMap::decode(e.bytes, {}, "test");
}

SymbolTable symbols(std::vector<FunctionSymbol> functions) {
  return SymbolTable::from_functions(std::move(functions), SymbolSource::Symtab, "test");
}

FunctionSymbol function(const char* name, uint64_t addr, uint64_t size, bool local = false) {
  FunctionSymbol f;
  f.name = name;
  f.raw_name = name;
  f.addr = addr;
  f.size = size;
  f.is_local = local;
  return f;
}

TEST(PropellerProfile, HotBlocksClusterByTheirEdgesAndCalleesFollowCallers) {
  const BbAddrMap map = two_functions();
  const SymbolTable table = symbols({function("f", 0x1000, 0x24), function("g", 0x2000, 0x10)});
  BranchProfile branches(&table);
  // 90 times: the entry block jumps to the returning block; 10 times it falls into block 1,
  // which jumps there too. Every time it calls g, which returns into the middle of block 0.
  branches.add_fall_through(FallThrough{0x1000, 0x100c, false}, 90);
  branches.add_branch(TakenBranch{0x100c, 0x1020, false, false}, 90, 0);
  branches.add_fall_through(FallThrough{0x1000, 0x1014, false}, 10);
  branches.add_branch(TakenBranch{0x1014, 0x1020, false, false}, 10, 0);
  branches.add_branch(TakenBranch{0x1005, 0x2000, false, false}, 100, 0);
  branches.add_fall_through(FallThrough{0x2000, 0x200f, false}, 100);
  branches.add_branch(TakenBranch{0x200f, 0x100a, false, false}, 100, 0);
  IpProfile ips;
  ips.add(0x1002, 30);
  ips.add(0x2004, 60);
  ips.add(0x9000, 10);  // in no function of the map

  const PropellerProfile p = make_propeller_profile(branches, map, table, &ips);
  // Block 3 (ID 2) right after the entry: the 90 jumps become a fall-through; block 1 (ID 3)
  // after it; block 2 (ID 1) never ran.
  EXPECT_EQ(p.clusters, "v1\nf f\nc 0 2 3\nf g\nc 0\n");
  EXPECT_EQ(p.symbol_order, "f\ng\nf.cold\n");
  EXPECT_EQ(p.stats.functions, 2u);
  EXPECT_EQ(p.stats.blocks, 4u);
  EXPECT_EQ(p.stats.cold_parts, 1u);
  EXPECT_EQ(p.stats.branches_mapped, 200u);    // the two jumps and the call
  EXPECT_EQ(p.stats.branches_unmapped, 100u);  // the return, into a block's middle
  EXPECT_EQ(p.stats.ranges_mapped, 200u);
  EXPECT_EQ(p.stats.ranges_unmapped, 0u);
  EXPECT_EQ(p.stats.samples, 100u);
  EXPECT_EQ(p.stats.covered_samples, 90u);
}

TEST(PropellerProfile, RangesAcrossFunctionsAndUnknownAddressesAreCountedUnmapped) {
  const BbAddrMap map = two_functions();
  const SymbolTable table = symbols({function("f", 0x1000, 0x24), function("g", 0x2000, 0x10)});
  BranchProfile branches(&table);
  branches.add_fall_through(FallThrough{0x1010, 0x2004, false}, 7);  // runs out of f into g
  branches.add_fall_through(FallThrough{0x1014, 0x1004, false}, 3);  // backwards: no such run
  branches.add_branch(TakenBranch{0x9000, 0x9010, false, false}, 5, 0);
  const PropellerProfile p = make_propeller_profile(branches, map, table, nullptr);
  EXPECT_EQ(p.clusters, "v1\n");
  EXPECT_EQ(p.symbol_order, "");
  EXPECT_EQ(p.stats.ranges_unmapped, 10u);
  EXPECT_EQ(p.stats.branches_unmapped, 5u);
  EXPECT_EQ(p.stats.functions, 0u);
}

TEST(PropellerProfile, TheEntryBeginsTheClusterEvenWhenOnlyALaterBlockWasSeen) {
  const BbAddrMap map = two_functions();
  const SymbolTable table = symbols({function("f", 0x1000, 0x24), function("g", 0x2000, 0x10)});
  BranchProfile branches(&table);
  // A stack that begins inside f's block 1: only it and the jump out of it are seen.
  branches.add_fall_through(FallThrough{0x1012, 0x1014, true}, 4);
  branches.add_branch(TakenBranch{0x1014, 0x1020, false, false}, 4, 0);
  const PropellerProfile p = make_propeller_profile(branches, map, table, nullptr);
  EXPECT_EQ(p.clusters, "v1\nf f\nc 0 3 2\n");
}

TEST(PropellerProfile, ALoopLatchThatOnlyJumpsBackIsLaidBeforeItsHeader) {
  // h at 0x3000: entry [0x0, 0x8) falls into the header [0x8, 0x10), which leaves the loop by a
  // branch at 0xe to the exit [0x18, 0x1c) or falls into the latch [0x10, 0x18), which jumps
  // back (at 0x16; it cannot fall through). Ten calls of a hundred rounds each.
  Encoder e;
  e.header(2, 0).address(0x3000).uleb(4);
  e.block(0, 0, 8, kFallThrough).block(1, 0, 8, kFallThrough).block(2, 0, 8, 0);
  e.block(3, 0, 4, kReturn);
  const BbAddrMap map = BbAddrMap::decode(e.bytes, {}, "test");
  const SymbolTable table = symbols({function("h", 0x3000, 0x1c)});
  BranchProfile branches(&table);
  branches.add_fall_through(FallThrough{0x3000, 0x3016, false}, 10);
  branches.add_branch(TakenBranch{0x3016, 0x3008, false, false}, 1000, 0);
  branches.add_fall_through(FallThrough{0x3008, 0x3016, false}, 990);
  branches.add_fall_through(FallThrough{0x3008, 0x300e, false}, 10);
  branches.add_branch(TakenBranch{0x300e, 0x3018, false, false}, 10, 0);
  branches.add_fall_through(FallThrough{0x3018, 0x301b, false}, 10);

  const PropellerProfile p = make_propeller_profile(branches, map, table, nullptr);
  // Header then latch, or latch then header, makes one of the loop's 1000-count edges a
  // fall-through either way; only the latch's removes a jump (LLVM's 1.05 against 1.0), and
  // then the exit falls out of the header.
  EXPECT_EQ(p.clusters, "v1\nf h\nc 0 2 1 3\n");
}

// two_functions() as two local functions named `step`, and a run through each.
SymbolTable two_steps() {
  return symbols({function("step", 0x1000, 0x24, true), function("step", 0x2000, 0x10, true)});
}
void run_both_steps(BranchProfile& branches) {
  branches.add_fall_through(FallThrough{0x1000, 0x100c, false}, 1);
  branches.add_fall_through(FallThrough{0x2000, 0x200f, false}, 1);
}

TEST(PropellerProfile, ALocalNameTwoFunctionsShareIsLeftOut) {
  const BbAddrMap map = two_functions();
  const SymbolTable table = two_steps();
  BranchProfile branches(&table);
  run_both_steps(branches);
  const PropellerProfile p = make_propeller_profile(branches, map, table, nullptr);
  EXPECT_EQ(p.clusters, "v1\n");
  EXPECT_EQ(p.stats.unnamed_functions, 2u);
}

// The compile units of the two `step`s of ALocalNameTwoFunctionsShareIsLeftOut.
std::string units_apart(uint64_t address) {
  if (address >= 0x1000 && address < 0x1024) return "src/a.c";
  if (address >= 0x2000 && address < 0x2010) return "./src/b.c";
  return "";
}

TEST(PropellerProfile, ALocalNameTwoFunctionsShareIsNamedWithItsModule) {
  const BbAddrMap map = two_functions();
  const SymbolTable table = two_steps();
  BranchProfile branches(&table);
  run_both_steps(branches);
  const PropellerProfile p = make_propeller_profile(branches, map, table, nullptr, units_apart);
  // Each under its own module (without the "./" LLVM leaves out too); the order names the
  // symbol once, and lld places both there.
  EXPECT_EQ(p.clusters, "v1\nm src/a.c\nf step\nc 0\nm src/b.c\nf step\nc 0\n");
  EXPECT_EQ(p.symbol_order, "step\nstep.cold\n");
  EXPECT_EQ(p.stats.module_named, 2u);
  EXPECT_EQ(p.stats.unnamed_functions, 0u);

  // Only one of them ran: it alone is named, but the name still needs its module.
  BranchProfile one(&table);
  one.add_fall_through(FallThrough{0x2000, 0x200f, false}, 1);
  EXPECT_EQ(make_propeller_profile(one, map, table, nullptr, units_apart).clusters,
            "v1\nm src/b.c\nf step\nc 0\n");
}

TEST(PropellerProfile, ALocalNameWhoseModulesDoNotTellItsFunctionsApartIsLeftOut) {
  const BbAddrMap map = two_functions();
  const SymbolTable table = two_steps();
  BranchProfile branches(&table);
  branches.add_fall_through(FallThrough{0x1000, 0x100c, false}, 1);  // only the first ran
  // The same file compiled twice; a unit without a name; a name the line cannot carry.
  for (const ModuleNameOf& module_of :
       {ModuleNameOf([](uint64_t) { return std::string("a.c"); }),
        ModuleNameOf([](uint64_t a) { return a == 0x1000 ? std::string("a.c") : std::string(); }),
        ModuleNameOf(
            [](uint64_t a) { return a == 0x1000 ? std::string("my a.c") : std::string("b.c"); })}) {
    const PropellerProfile p = make_propeller_profile(branches, map, table, nullptr, module_of);
    EXPECT_EQ(p.clusters, "v1\n");
    EXPECT_EQ(p.stats.unnamed_functions, 1u);
  }
}

}  // namespace
}  // namespace profcollect
