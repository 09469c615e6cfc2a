// make_propeller_profile on hand-encoded address maps, with counts worked out by hand: branches
// and ranges laid on blocks, clusters by block ID with the entry first and cold blocks left out,
// rarely run blocks in a warm cluster (the binary's share and the 1-in-10 rule deciding), each
// cluster laid out by its own edges, calls ordering callees after callers, warm parts after the
// hot ones and cold parts last, unmapped branches and ranges counted, names two functions share
// told apart by their modules or left out.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

// The symbols of two_functions().
SymbolTable f_and_g() {
  return symbols({function("f", 0x1000, 0x24), function("g", 0x2000, 0x10)});
}

// A map with its symbols, the branches a test lays on them, and their profile.
struct Laid {
  Laid(BbAddrMap m, SymbolTable t) : map(std::move(m)), table(std::move(t)) {}
  Laid(const Laid&) = delete;  // `branches` points at `table`
  Laid& operator=(const Laid&) = delete;
  BbAddrMap map;
  SymbolTable table;
  BranchProfile branches{&table};
  PropellerProfile profile(const PropellerOptions& options = {}) const {
    return make_propeller_profile(branches, map, table, nullptr, {}, options);
  }
  // `count` times: straight from `from` to the branch at `branch`, taken to `to`.
  void run(uint64_t from, uint64_t branch, uint64_t to, uint64_t count) {
    through(from, branch, count);
    branches.add_branch(TakenBranch{branch, to, false, false}, count, 0);
  }
  // From the entry at `from` to `to` two ways: `straight` times by the branch at `early`,
  // `around` times on through the blocks up to the branch at `late`.
  void two_ways(uint64_t from, uint64_t early, uint64_t late, uint64_t to, uint64_t straight,
                uint64_t around) {
    run(from, early, to, straight);
    run(from, late, to, around);
  }
  // `count` times: straight from `from` to `last`.
  void through(uint64_t from, uint64_t last, uint64_t count) {
    branches.add_fall_through(FallThrough{from, last, false}, count);
  }
};
struct FAndG : Laid {
  FAndG() : Laid(two_functions(), f_and_g()) {}
};

// NAME at ADDRESS: four blocks, IDs 0 to 3 in address order, of the sizes and flags given.
Laid four_blocks(const char* name, uint64_t address, std::array<uint32_t, 4> sizes,
                 std::array<uint32_t, 4> flags) {
  Encoder e;
  e.header(2, 0).address(address).uleb(4);
  uint64_t size = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    e.block(i, 0, sizes[i], flags[i]);
    size += sizes[i];
  }
  return Laid(BbAddrMap::decode(e.bytes, {}, "test"), symbols({function(name, address, size)}));
}

TEST(PropellerProfile, HotBlocksClusterByTheirEdgesAndCalleesFollowCallers) {
  const BbAddrMap map = two_functions();
  const SymbolTable table = f_and_g();
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
  FAndG t;
  t.branches.add_fall_through(FallThrough{0x1010, 0x2004, false}, 7);  // runs out of f into g
  t.branches.add_fall_through(FallThrough{0x1014, 0x1004, false}, 3);  // backwards: no such run
  t.branches.add_branch(TakenBranch{0x9000, 0x9010, false, false}, 5, 0);
  const PropellerProfile p = t.profile();
  EXPECT_EQ(p.clusters, "v1\n");
  EXPECT_EQ(p.symbol_order, "");
  EXPECT_EQ(p.stats.ranges_unmapped, 10u);
  EXPECT_EQ(p.stats.branches_unmapped, 5u);
  EXPECT_EQ(p.stats.functions, 0u);
}

TEST(PropellerProfile, TheEntryBeginsTheClusterEvenWhenOnlyALaterBlockWasSeen) {
  FAndG t;
  // A stack that begins inside f's block 1: only it and the jump out of it are seen.
  t.branches.add_fall_through(FallThrough{0x1012, 0x1014, true}, 4);
  t.branches.add_branch(TakenBranch{0x1014, 0x1020, false, false}, 4, 0);
  const PropellerProfile p = t.profile();
  EXPECT_EQ(p.clusters, "v1\nf f\nc 0 3 2\n");
}

TEST(PropellerProfile, ALoopLatchThatOnlyJumpsBackIsLaidBeforeItsHeader) {
  // h at 0x3000: entry [0x0, 0x8) falls into the header [0x8, 0x10), which leaves the loop by a
  // branch at 0xe to the exit [0x18, 0x1c) or falls into the latch [0x10, 0x18), which jumps
  // back (at 0x16; it cannot fall through). Ten calls of a hundred rounds each.
  Laid t = four_blocks("h", 0x3000, {8, 8, 8, 4}, {kFallThrough, kFallThrough, 0, kReturn});
  t.branches.add_fall_through(FallThrough{0x3000, 0x3016, false}, 10);
  t.branches.add_branch(TakenBranch{0x3016, 0x3008, false, false}, 1000, 0);
  t.branches.add_fall_through(FallThrough{0x3008, 0x3016, false}, 990);
  t.branches.add_fall_through(FallThrough{0x3008, 0x300e, false}, 10);
  t.branches.add_branch(TakenBranch{0x300e, 0x3018, false, false}, 10, 0);
  t.branches.add_fall_through(FallThrough{0x3018, 0x301b, false}, 10);

  const PropellerProfile p = t.profile();
  // Header then latch, or latch then header, makes one of the loop's 1000-count edges a
  // fall-through either way; only the latch's removes a jump (LLVM's 1.05 against 1.0), and
  // then the exit falls out of the header.
  EXPECT_EQ(p.clusters, "v1\nf h\nc 0 2 1 3\n");
}

// f's entry jumps to its returning block 1005 times and calls g each time; 5 of those times it
// first falls into block 1 (ID 3), which jumps to the returning block too. Bytes run: f's entry
// 1005 x 16, its returning block 1005 x 4, g 1005 x 16 (together 36,180, 99.9% of them), block
// 1 5 x 8 (40).
// The profile's two files.
void expect_files(const PropellerProfile& p, const std::string& clusters,
                  const std::string& symbol_order) {
  EXPECT_EQ(p.clusters, clusters);
  EXPECT_EQ(p.symbol_order, symbol_order);
}

std::array<uint64_t, 5> parts_of(const PropellerStats& s) {
  return {s.functions, s.blocks, s.warm_parts, s.warm_blocks, s.cold_parts};
}

void rarely_through_block_1(Laid& t) {
  t.two_ways(0x1000, 0x100c, 0x1014, 0x1020, 1000, 5);
  t.branches.add_branch(TakenBranch{0x1005, 0x2000, false, false}, 1005, 0);
  t.through(0x2000, 0x200f, 1005);
}

TEST(PropellerProfile, ARarelyRunBlockGoesToAWarmClusterOrderedAfterEveryHotPart) {
  FAndG t;
  rarely_through_block_1(t);
  const PropellerProfile p = t.profile();
  // The blocks run 1005 times hold 99.9% of the bytes run: hot. Block 1 (ID 3) ran but is not
  // among them: warm, in f's second cluster, which clang names f.__part.1; block 2 (ID 1) never
  // ran: cold.
  expect_files(p, "v1\nf f\nc 0 2\nc 3\nf g\nc 0\n", "f\ng\nf.__part.1\nf.cold\n");
  // Functions, blocks, warm parts, warm blocks, cold parts.
  EXPECT_EQ(parts_of(p.stats), (std::array<uint64_t, 5>{2, 4, 1, 1, 1}));
}

TEST(PropellerProfile, TheHotShareSaysWhichBlocksAreHot) {
  FAndG t;
  rarely_through_block_1(t);
  // 99.95% of the bytes run need block 1 too (36,180 of 36,220 is 99.89%): every block that ran
  // is hot, as with a share of 1.
  for (const double share : {0.9995, 1.0}) {
    SCOPED_TRACE(share);
    const PropellerProfile p = t.profile(PropellerOptions{.hot_share = share});
    expect_files(p, "v1\nf f\nc 0 2 3\nf g\nc 0\n", "f\ng\nf.cold\n");
    EXPECT_EQ(p.stats.warm_parts, 0u);
  }
  // Half the bytes run: g's block (16,080) and f's entry (16,080) are needed, and f's returning
  // block, run as often, is hot with them.
  const PropellerProfile half = t.profile(PropellerOptions{.hot_share = 0.5});
  EXPECT_EQ(half.clusters, "v1\nf f\nc 0 2\nc 3\nf g\nc 0\n");
}

TEST(PropellerProfile, ABlockRunInOneInTenOfItsFunctionsRunsStaysHot) {
  FAndG t;
  // f runs 100 times: 80 straight to its returning block, 20 through block 1 (ID 3). g runs
  // 100,000 times: its 1,600,000 bytes run are 99.9% of the binary's, the share alone.
  t.two_ways(0x1000, 0x100c, 0x1014, 0x1020, 80, 20);
  t.through(0x2000, 0x200f, 100000);
  // Block 1 ran in 20% of f's runs, its returning block (ID 2) in all: both hot.
  const PropellerProfile p = t.profile();
  expect_files(p, "v1\nf f\nc 0 2 3\nf g\nc 0\n", "g\nf\nf.cold\n");
  EXPECT_EQ(p.stats.warm_parts, 0u);
  // Kept hot from one run in four: block 1 is warm.
  const PropellerProfile quarter = t.profile(PropellerOptions{.runs_share_kept_hot = 0.25});
  expect_files(quarter, "v1\nf f\nc 0 2\nc 3\nf g\nc 0\n", "g\nf\nf.__part.1\nf.cold\n");
}

TEST(PropellerProfile, WarmBlocksKeepTheirFallThroughsWithinTheirCluster) {
  // k at 0x4000: the entry [0x0, 0x8) branches at 0x6 to the returning block [0x18, 0x20), or
  // falls into A [0x8, 0x10), which falls into B [0x10, 0x18), which jumps at 0x16 to the
  // returning block. 1000 runs; 4 of them through A and B.
  Laid t = four_blocks("k", 0x4000, {8, 8, 8, 8}, {kFallThrough, kFallThrough, 0, kReturn});
  t.two_ways(0x4000, 0x4006, 0x4016, 0x4018, 996, 4);
  t.through(0x4018, 0x401f, 1000);
  const PropellerProfile p = t.profile();
  // Hot: the entry and the returning block (16,000 of 16,064 bytes run), the entry's 996 jumps
  // made a fall-through. Warm: A then B, A's 4 fall-throughs into B kept.
  expect_files(p, "v1\nf k\nc 0 3\nc 1 2\n", "k\nk.__part.1\n");
  EXPECT_EQ(p.stats.cold_parts, 0u);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Random maps (1 to 6 functions of 1 to 12 blocks of 1 to 32 bytes, IDs shuffled) and random
// runs along consecutive blocks of a function, counts from 1 to 100,000: whatever the counts,
// each function that ran has one or two clusters holding every block that ran (and its entry,
// first) once; the order lists NAME.__part.1 exactly for those with two, NAME.cold exactly for
// those with a block that did not run, and every hot part before any warm part before any cold
// part.
TEST(PropellerProfile, PropertyEveryBlockThatRanIsInOneClusterAndThePartsComeInOrder) {
  std::mt19937_64 rng(20261207);
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(round);
    struct Function {
      std::string name;
      std::vector<uint32_t> ids;
      std::vector<uint64_t> starts, sizes;
      std::set<uint32_t> ran;  // IDs
    };
    std::vector<Function> functions(1 + rng() % 6);
    Encoder e;
    std::vector<FunctionSymbol> symbol_list;
    uint64_t address = 0x10000;
    for (size_t f = 0; f < functions.size(); ++f) {
      Function& fn = functions[f];
      fn.name = "f" + std::to_string(f);
      const uint32_t n = 1 + rng() % 12;
      for (uint32_t i = 0; i < n; ++i) fn.ids.push_back(i);
      std::shuffle(fn.ids.begin() + 1, fn.ids.end(), rng);
      e.header(2, 0).address(address).uleb(n);
      uint64_t offset = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const uint64_t size = 1 + rng() % 32;
        e.block(fn.ids[i], 0, static_cast<uint32_t>(size), i + 1 < n ? kFallThrough : kReturn);
        fn.starts.push_back(address + offset);
        fn.sizes.push_back(size);
        offset += size;
      }
      symbol_list.push_back(function(fn.name.c_str(), address, offset));
      address += offset + 16;
    }
    const BbAddrMap map = BbAddrMap::decode(e.bytes, {}, "test");
    const SymbolTable table = symbols(symbol_list);
    BranchProfile branches(&table);
    for (uint64_t runs = rng() % 20; runs > 0; --runs) {
      Function& fn = functions[rng() % functions.size()];
      uint32_t first = rng() % fn.ids.size(), last = rng() % fn.ids.size();
      if (first > last) std::swap(first, last);
      const uint64_t count = rng() % 2 ? 1 + rng() % 10 : 1 + rng() % 100000;
      branches.add_fall_through(
          FallThrough{fn.starts[first], fn.starts[last] + fn.sizes[last] - 1, false}, count);
      for (uint32_t b = first; b <= last; ++b) fn.ran.insert(fn.ids[b]);
    }
    const PropellerProfile p = make_propeller_profile(branches, map, table, nullptr);

    std::map<std::string, std::vector<std::vector<uint32_t>>> clusters;
    std::string name;
    for (const std::string& line : lines_of(p.clusters)) {
      if (line.starts_with("f ")) {
        name = line.substr(2);
      } else if (line.starts_with("c ")) {
        std::istringstream ids(line.substr(2));
        std::vector<uint32_t>& c = clusters[name].emplace_back();
        for (uint32_t id; ids >> id;) c.push_back(id);
      }
    }
    std::map<std::string, int> rank;  // symbol -> 0 hot, 1 warm, 2 cold
    int last_rank = 0;
    for (const std::string& symbol : lines_of(p.symbol_order)) {
      const int r = symbol.ends_with(".cold") ? 2 : symbol.ends_with(".__part.1") ? 1 : 0;
      EXPECT_GE(r, last_rank) << symbol << " after a later kind of part";
      last_rank = r;
      EXPECT_TRUE(rank.emplace(symbol, r).second) << symbol << " listed twice";
    }
    for (const Function& fn : functions) {
      SCOPED_TRACE(fn.name);
      if (fn.ran.empty()) {
        EXPECT_EQ(clusters.count(fn.name), 0u);
        EXPECT_EQ(rank.count(fn.name), 0u);
        continue;
      }
      ASSERT_EQ(clusters.count(fn.name), 1u) << p.clusters;
      const auto& parts = clusters.at(fn.name);
      ASSERT_TRUE(parts.size() == 1 || parts.size() == 2) << p.clusters;
      ASSERT_FALSE(parts.front().empty());
      EXPECT_EQ(parts.front().front(), fn.ids.front()) << "the entry begins the first cluster";
      std::set<uint32_t> listed, expected = fn.ran;
      expected.insert(fn.ids.front());
      for (const auto& c : parts) {
        EXPECT_FALSE(c.empty());
        for (const uint32_t id : c) EXPECT_TRUE(listed.insert(id).second) << id << " twice";
      }
      EXPECT_EQ(listed, expected);
      EXPECT_EQ(rank.count(fn.name), 1u);
      EXPECT_EQ(rank.count(fn.name + ".__part.1"), parts.size() == 2 ? 1u : 0u);
      EXPECT_EQ(rank.count(fn.name + ".cold"), listed.size() < fn.ids.size() ? 1u : 0u);
    }
  }
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
