// The caches in front of the branch counters' maps (output/recent_map_nodes.h): counts through
// them equal counts made on a plain map, with far more keys than slots (collisions evict); a copy
// of a counter starts with its own cache, so that counting into the copy or the original never
// lands in the other's map; a cleared cache after the map was moved away forgets its nodes.
#include "output/recent_map_nodes.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

#include "output/branch_profile.h"

namespace profcollect {
namespace {

using Counts = std::map<std::pair<uint64_t, uint64_t>, uint64_t>;
struct PairHash {
  uint64_t operator()(const std::pair<uint64_t, uint64_t>& p) const {
    return mix_hash(p.first, p.second);
  }
};

TEST(RecentMapNodes, CountsEqualAPlainMapsWithManyMoreKeysThanSlots) {
  Counts cached, plain;
  RecentMapNodes<Counts, PairHash> recent;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    // Hot keys (a loop's branches) and a long tail.
    const uint64_t a = rng() % 3 == 0 ? rng() % 16 : rng() % 20000;
    const std::pair<uint64_t, uint64_t> key{0x401000 + a, 0x401000 + (a * 7) % 977};
    const uint64_t w = 1 + rng() % 3;
    recent(cached, key) += w;
    plain[key] += w;
  }
  EXPECT_GT(plain.size(), 10000u);
  EXPECT_EQ(cached, plain);
}

TEST(RecentMapNodes, ACopyCountsIntoItsOwnMap) {
  Counts original;
  RecentMapNodes<Counts, PairHash> recent;
  recent(original, {1, 2}) += 5;
  Counts copy_map = original;
  RecentMapNodes<Counts, PairHash> copy = recent;
  copy(copy_map, {1, 2}) += 1;
  recent(original, {1, 2}) += 10;
  EXPECT_EQ(copy_map.at({1, 2}), 6u);
  EXPECT_EQ(original.at({1, 2}), 15u);
}

TEST(RecentMapNodes, ClearedAfterTheMapMovesAway) {
  Counts counts;
  RecentMapNodes<Counts, PairHash> recent;
  recent(counts, {3, 4}) += 1;
  Counts taken = std::move(counts);
  counts = Counts();
  recent.clear();
  recent(counts, {3, 4}) += 2;
  EXPECT_EQ(taken.at({3, 4}), 1u);
  EXPECT_EQ(counts.at({3, 4}), 2u);
}

TEST(RecentAnswers, AnswersAreTheFunctionsAnswersThroughCollisions) {
  struct AddressHash {
    uint64_t operator()(uint64_t a) const { return mix_hash(a, 0); }
  };
  RecentAnswers<uint64_t, bool, AddressHash> recent;
  std::mt19937_64 rng(9);
  size_t asked = 0;
  auto odd = [&](uint64_t a) {
    ++asked;
    return (a & 1) != 0;
  };
  for (int i = 0; i < 100000; ++i) {
    const uint64_t a = rng() % 50000;
    ASSERT_EQ(recent(a, odd), (a & 1) != 0) << a;
  }
  EXPECT_LT(asked, 100000u);  // answered from the cache at times, not asked each time
}

// BranchProfile's copies (a flush takes one while counting goes on) keep apart.
TEST(RecentMapNodes, ABranchProfileCopyAndItsOriginalCountApart) {
  BranchProfile profile;
  const BranchStackEntry entry{0x1000, 0x2000, true, true, false};
  profile.add_stack(std::span(&entry, 1), 1);
  BranchProfile copy = profile;
  copy.add_stack(std::span(&entry, 1), 2);
  profile.add_stack(std::span(&entry, 1), 4);
  const TakenBranch key{0x1000, 0x2000, false, false};
  EXPECT_EQ(copy.branches().at(key).count, 3u);
  EXPECT_EQ(profile.branches().at(key).count, 5u);
}

}  // namespace
}  // namespace profcollect
