#include "output/branch_profile.h"

#include <gtest/gtest.h>

#include <vector>

namespace profcollect {
namespace {

BranchStackEntry inside(uint64_t from, uint64_t to, bool mispredicted = false) {
  return BranchStackEntry{from, to, true, true, mispredicted};
}

TEST(BranchProfileTest, CountsTakenBranchesAndMispredicts) {
  BranchProfile profile;
  const std::vector<BranchStackEntry> stack = {inside(0x120, 0x100, true), inside(0x120, 0x100)};
  profile.add_stack(stack);
  profile.add_stack(stack, 3);
  const auto& branches = profile.branches();
  ASSERT_EQ(branches.size(), 1u);
  const auto& [branch, counts] = *branches.begin();
  EXPECT_EQ(branch, (TakenBranch{0x120, 0x100, false, false}));
  EXPECT_EQ(counts.count, 2u * 4u);
  EXPECT_EQ(counts.mispredicts, 4u);  // one mispredicted entry per stack, weight 1 + 3
}

TEST(BranchProfileTest, FallThroughRunsFromOlderTargetToNewerSource) {
  BranchProfile profile;
  // Newest first: the code went 0x200 -> 0x300, ran to 0x340, branched 0x340 -> 0x400, ran to
  // 0x410 and branched 0x410 -> 0x500.
  const std::vector<BranchStackEntry> stack = {inside(0x410, 0x500), inside(0x340, 0x400),
                                               inside(0x200, 0x300)};
  profile.add_stack(stack);
  std::map<FallThrough, uint64_t> expected = {{{0x300, 0x340, false}, 1},
                                              {{0x400, 0x410, false}, 1}};
  EXPECT_EQ(profile.fall_throughs(), expected);
  EXPECT_EQ(profile.branches().size(), 3u);
}

TEST(BranchProfileTest, BranchFromOutsideGivesExternalOriginRange) {
  BranchProfile profile;
  const std::vector<BranchStackEntry> stack = {
      inside(0x140, 0x100),
      BranchStackEntry{0x7f0000001000, 0x120, false, true, false},  // return from a library
  };
  profile.add_stack(stack);
  std::map<FallThrough, uint64_t> expected = {{{0x120, 0x140, true}, 1}};
  EXPECT_EQ(profile.fall_throughs(), expected);
  EXPECT_EQ(profile.branches().count(TakenBranch{0x7f0000001000, 0x120, true, false}), 1u);
}

TEST(BranchProfileTest, EntriesOutsideAtBothEndsAreDroppedAndBreakRanges) {
  BranchProfile profile;
  const std::vector<BranchStackEntry> stack = {
      BranchStackEntry{0x150, 0x7f0000002000, true, false, false},  // call into a library
      BranchStackEntry{0x7f0000003000, kExternalAddress, false, false, false},  // to the kernel
      inside(0x100, 0x110),
  };
  profile.add_stack(stack);
  EXPECT_EQ(profile.stats().external_entries, 1u);
  EXPECT_EQ(profile.stats().entries, 3u);
  EXPECT_EQ(profile.branches().size(), 2u);
  // Neither 0x110..0x7f0000003000 nor kernel..0x150 is a range of this binary.
  EXPECT_TRUE(profile.fall_throughs().empty());
  EXPECT_EQ(profile.branches().count(TakenBranch{0x150, 0x7f0000002000, false, true}), 1u);
}

TEST(BranchProfileTest, BackwardsRangesAreKeptForTheWritersToJudge) {
  BranchProfile profile;
  const std::vector<BranchStackEntry> stack = {inside(0x100, 0x200), inside(0x300, 0x180)};
  profile.add_stack(stack);
  ASSERT_EQ(profile.fall_throughs().size(), 1u);
  EXPECT_EQ(profile.fall_throughs().begin()->first, (FallThrough{0x180, 0x100, false}));
}

TEST(BranchProfileTest, WithFunctionsABranchFromAnotherFunctionIsAnExternalOrigin) {
  FunctionSymbol work, step;
  work.addr = 0x100, work.size = 0x80, work.name = "work";
  step.addr = 0x180, step.size = 0x20, step.name = "step";
  const SymbolTable functions =
      SymbolTable::from_functions({work, step}, SymbolSource::Symtab, "test");
  BranchProfile profile(&functions);
  const std::vector<BranchStackEntry> stack = {
      inside(0x110, 0x120),  // newest: a branch in work
      inside(0x150, 0x100),  // ...after a loop branch inside work
      inside(0x19f, 0x140),  // ...after step returned into work
  };
  profile.add_stack(stack);
  std::map<FallThrough, uint64_t> expected = {{{0x100, 0x110, false}, 1},
                                              {{0x140, 0x150, true}, 1}};
  EXPECT_EQ(profile.fall_throughs(), expected);

  BranchProfile by_binary;  // the same stack judged by the binary only: both ranges internal
  by_binary.add_stack(stack);
  std::map<FallThrough, uint64_t> internal = {{{0x100, 0x110, false}, 1},
                                              {{0x140, 0x150, false}, 1}};
  EXPECT_EQ(by_binary.fall_throughs(), internal);
}

}  // namespace
}  // namespace profcollect
