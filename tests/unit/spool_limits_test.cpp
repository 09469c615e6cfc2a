// The daemon's retention_days and max_disk_mb: which binary directories go, least recently
// sampled first, never one the running session profiles.
#include "collector/spool_limits.h"

#include <gtest/gtest.h>

namespace profcollect {
namespace {

std::vector<std::string> names(const std::vector<Eviction>& evictions) {
  std::vector<std::string> out;
  for (const auto& e : evictions) out.push_back(e.entry.directory + ":" + e.reason);
  return out;
}

const std::vector<SpoolEntry> kEntries = {
    {"c", 300, 30}, {"a", 100, 10}, {"d", 400, 40}, {"b", 200, 20},
};

TEST(SpoolLimits, NoLimitsEvictNothing) { EXPECT_TRUE(choose_evictions(kEntries, 1000, {}, {}).empty()); }

TEST(SpoolLimits, TheLeastRecentlySampledGoFirstUntilTheBudgetHolds) {
  SpoolLimits limits;
  limits.max_bytes = 600;  // 1000 bytes: a (100) and b (200) are not enough, c makes it 400
  EXPECT_EQ(names(choose_evictions(kEntries, 1000, limits, {})),
            (std::vector<std::string>{"a:max_disk_mb", "b:max_disk_mb", "c:max_disk_mb"}));
  limits.max_bytes = 1000;
  EXPECT_TRUE(choose_evictions(kEntries, 1000, limits, {}).empty());
}

TEST(SpoolLimits, RetentionRemovesWhatWasLastSampledBeforeTheLimit) {
  SpoolLimits limits;
  limits.expire_before_ns = 25;
  EXPECT_EQ(names(choose_evictions(kEntries, 1000, limits, {})),
            (std::vector<std::string>{"a:retention_days", "b:retention_days"}));
}

TEST(SpoolLimits, BinariesBeingProfiledAreNeverChosen) {
  SpoolLimits limits;
  limits.max_bytes = 500;
  limits.expire_before_ns = 25;
  EXPECT_EQ(names(choose_evictions(kEntries, 1000, limits, {"a", "c"})),
            (std::vector<std::string>{"b:retention_days", "d:max_disk_mb"}));
}

}  // namespace
}  // namespace profcollect
