// samples.branch keeps live branch counts between runs: what is written reads back as the same
// counts, a file read twice adds up, and damage is refused with the line it is on (the store
// then sets the file aside instead of adding to it).
#include <gtest/gtest.h>

#include <random>

#include "output/branch_samples_file.h"

namespace profcollect {
namespace {

BranchSamples random_samples(uint32_t seed) {
  std::mt19937_64 rng(seed);
  BranchSamples s;
  s.stacks = rng() % 1000;
  for (int i = 0; i < 200; ++i) {
    uint64_t a = 0x1000 + rng() % 0x400, b = 0x1000 + rng() % 0x400;
    bool fe = rng() % 5 == 0, te = rng() % 7 == 0;
    uint64_t count = 1 + rng() % 50;
    s.bolt.add_branch(TakenBranch{fe ? 0 : a, te ? 0 : b, fe, te}, count, rng() % (count + 1));
    s.bolt.add_fall_through(FallThrough{a, b, rng() % 3 == 0}, 1 + rng() % 9);
    s.ranges.ranges[{a, b}] += 1 + rng() % 9;
    s.ranges.branches[{fe ? kExternalAddress : a, te ? kExternalAddress : b}] += 1 + rng() % 9;
  }
  return s;
}

void expect_equal(const BranchSamples& a, const BranchSamples& b) {
  EXPECT_EQ(a.stacks, b.stacks);
  EXPECT_EQ(a.bolt.branches(), b.bolt.branches());
  EXPECT_EQ(a.bolt.fall_throughs(), b.bolt.fall_throughs());
  EXPECT_EQ(a.ranges.ranges, b.ranges.ranges);
  EXPECT_EQ(a.ranges.branches, b.ranges.branches);
}

TEST(BranchSamplesFile, WrittenCountsReadBackEqual) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    BranchSamples s = random_samples(seed);
    std::string error;
    auto back = parse_branch_samples(format_branch_samples(s), &error);
    ASSERT_TRUE(back) << error;
    expect_equal(*back, s);
  }
}

TEST(BranchSamplesFile, MergeAddsEveryCount) {
  BranchSamples a = random_samples(7), b = random_samples(8);
  BranchSamples sum = a;
  sum.merge(b);
  EXPECT_EQ(sum.stacks, a.stacks + b.stacks);
  for (const auto& [key, counts] : b.bolt.branches()) {
    auto in_a = a.bolt.branches().find(key);
    uint64_t expected = counts.count + (in_a == a.bolt.branches().end() ? 0 : in_a->second.count);
    EXPECT_EQ(sum.bolt.branches().at(key).count, expected);
  }
  for (const auto& [key, count] : b.ranges.ranges) {
    auto in_a = a.ranges.ranges.find(key);
    EXPECT_EQ(sum.ranges.ranges.at(key),
              count + (in_a == a.ranges.ranges.end() ? 0 : in_a->second));
  }
}

TEST(BranchSamplesFile, ExternalEndsSurvive) {
  BranchSamples s;
  s.ranges.branches[{kExternalAddress, 0x1234}] = 3;
  s.ranges.branches[{0x1234, kExternalAddress}] = 4;
  s.bolt.add_branch(TakenBranch{0, 0x1234, true, false}, 5, 1);
  std::string text = format_branch_samples(s);
  EXPECT_NE(text.find("T x 1234 3"), std::string::npos) << text;
  auto back = parse_branch_samples(text, nullptr);
  ASSERT_TRUE(back);
  expect_equal(*back, s);
}

TEST(BranchSamplesFile, DamageIsRefusedWithItsLine) {
  std::string good = format_branch_samples(random_samples(3));
  std::string error;
  EXPECT_FALSE(parse_branch_samples("", &error));
  EXPECT_FALSE(parse_branch_samples("0x1234 5\n", &error));
  EXPECT_NE(error.find("line 1"), std::string::npos) << error;
  // A line cut short, as a torn write would leave it (the store writes atomically, but a file
  // may be damaged by other means).
  std::string cut = good.substr(0, good.rfind(' '));
  EXPECT_FALSE(parse_branch_samples(cut, &error));
  EXPECT_NE(error.find("line"), std::string::npos);
  EXPECT_FALSE(parse_branch_samples(good + "B 12 zz - 1 0\n", &error));
  EXPECT_FALSE(parse_branch_samples(good + "Q 1 2 3\n", &error));
  EXPECT_NE(error.find("unknown record 'Q'"), std::string::npos) << error;
  EXPECT_FALSE(parse_branch_samples(good + "R 1 2 99999999999999999999999\n", &error));
}

TEST(BranchSamplesFile, LinesOfSpacesAreBlank) {
  // A line with no field at all (only spaces) once indexed its first field anyway.
  std::string error;
  auto back = parse_branch_samples("# profcollect branch samples 1\n   \nstacks 2\n \n", &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->stacks, 2u);
}

}  // namespace
}  // namespace profcollect
