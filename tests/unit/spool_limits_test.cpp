// The daemon's retention_days and max_disk_mb: which binary directories go, least recently
// sampled first, whether or not the running session profiles it (the budget is a hard limit).
#include "collector/service/spool_limits.h"

#include "collector/service/spool_index.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "output/directory_handle.h"

namespace profcollect {
namespace {

std::vector<std::string> names(const std::vector<Eviction>& evictions) {
  std::vector<std::string> out;
  for (const auto& e : evictions) out.push_back(e.entry.directory + ":" + e.reason);
  return out;
}

const std::vector<SpoolEntry> kEntries = {
    {"c", 300, 30},
    {"a", 100, 10},
    {"d", 400, 40},
    {"b", 200, 20},
};

TEST(SpoolLimits, NoLimitsEvictNothing) {
  EXPECT_TRUE(choose_evictions(kEntries, 1000, {}).empty());
}

TEST(SpoolLimits, TheLeastRecentlySampledGoFirstUntilTheBudgetHolds) {
  SpoolLimits limits;
  limits.max_bytes = 600;  // 1000 bytes: a (100) and b (200) are not enough, c makes it 400
  EXPECT_EQ(names(choose_evictions(kEntries, 1000, limits)),
            (std::vector<std::string>{"a:max_disk_mb", "b:max_disk_mb", "c:max_disk_mb"}));
  limits.max_bytes = 1000;
  EXPECT_TRUE(choose_evictions(kEntries, 1000, limits).empty());
}

TEST(SpoolLimits, RetentionRemovesWhatWasLastSampledBeforeTheLimit) {
  SpoolLimits limits;
  limits.expire_before_ns = 25;
  EXPECT_EQ(names(choose_evictions(kEntries, 1000, limits)),
            (std::vector<std::string>{"a:retention_days", "b:retention_days"}));
}

TEST(SpoolLimits, RetentionFirstThenTheBudgetWithTiesByName) {
  SpoolLimits limits;
  limits.max_bytes = 500;
  limits.expire_before_ns = 15;
  std::vector<SpoolEntry> entries = kEntries;
  entries.push_back({"b2", 50, 20});  // sampled at the same time as b: the name decides
  EXPECT_EQ(names(choose_evictions(entries, 1050, limits)),
            (std::vector<std::string>{"a:retention_days", "b:max_disk_mb", "b2:max_disk_mb",
                                      "c:max_disk_mb"}));
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Links are neither counted nor read, hidden entries (a generation being written) are not
// binary directories.
TEST(SpoolLimits, TheSpoolIsReadWithoutFollowingLinks) {
  namespace fs = std::filesystem;
  char templ[] = "/tmp/spool-limits-XXXXXX";
  ASSERT_NE(::mkdtemp(templ), nullptr);
  const fs::path root = templ, dir = root / "out", outside = root / "outside";
  fs::create_directories(dir / "a");
  fs::create_directories(dir / ".a.gen-0123456789ab");
  fs::create_directories(dir / "e");
  fs::create_directories(outside);
  write(dir / "a" / "meta.json", "{\"last_sample_ns\": 5}");  // 21 bytes
  write(dir / "a" / "samples.ip", std::string(100, '0'));
  write(dir / ".a.gen-0123456789ab" / "samples.ip", std::string(7, '0'));
  write(dir / "collection.json", "{}");
  write(outside / "meta.json", "{\"last_sample_ns\": 9}");
  write(outside / "big", std::string(5000, '0'));
  fs::create_directory_symlink(outside, dir / "c");
  fs::create_symlink(outside / "big", dir / "d");
  fs::create_symlink(outside / "meta.json", dir / "e" / "meta.json");

  EXPECT_EQ(directory_bytes(dir.string()), 21u + 100u + 7u + 2u);
  EXPECT_EQ(directory_bytes((dir / "c").string()), 0u) << "a link given as the directory";
  SpoolIndex index;
  index.rescan(DirectoryHandle::open_existing(dir.string()));
  std::vector<SpoolEntry> entries = index.binaries();
  std::sort(entries.begin(), entries.end(),
            [](const SpoolEntry& x, const SpoolEntry& y) { return x.directory < y.directory; });
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].directory, "a");
  EXPECT_EQ(entries[0].bytes, 121u);
  EXPECT_EQ(entries[0].last_sample_ns, 5u);
  EXPECT_EQ(entries[1].directory, "e");
  EXPECT_EQ(entries[1].bytes, 0u);
  EXPECT_GT(entries[1].last_sample_ns, 9u)
      << "the linked meta.json was read; the directory's time is the fallback";
  EXPECT_EQ(index.total_bytes(), 21u + 100u + 7u + 2u);
  fs::remove_all(root);
}

// After the first reading, a flush's accounting reads what it wrote and what appeared, not
// every directory again; what went is forgotten.
TEST(SpoolIndex, ARefreshReadsOnlyWhatWasWrittenOrAppeared) {
  namespace fs = std::filesystem;
  char templ[] = "/tmp/spool-index-XXXXXX";
  ASSERT_NE(::mkdtemp(templ), nullptr);
  const fs::path dir = templ;
  for (int i = 0; i < 50; ++i) {
    fs::create_directories(dir / ("bin" + std::to_string(i)));
    write(dir / ("bin" + std::to_string(i)) / "meta.json",
          "{\"last_sample_ns\": " + std::to_string(100 + i) + "}");
  }
  const DirectoryHandle handle = DirectoryHandle::open_existing(dir.string());
  SpoolIndex index;
  index.rescan(handle);
  ASSERT_EQ(index.binaries().size(), 50u);
  const size_t first = index.entries_read();
  EXPECT_EQ(first, 50u);

  // bin3 written again (bigger, sampled later); bin7 removed by an operator; new1 copied in.
  write(dir / "bin3" / "meta.json", "{\"last_sample_ns\": 999999}");
  write(dir / "bin3" / "samples.ip", std::string(1000, '1'));
  fs::remove_all(dir / "bin7");
  fs::create_directories(dir / "new1");
  write(dir / "new1" / "meta.json", "{\"last_sample_ns\": 1}");
  // bin5 changed behind the index's back: not read again (a rescan would see it).
  write(dir / "bin5" / "samples.ip", std::string(500, '5'));
  index.refresh(handle, {"bin3"});
  EXPECT_EQ(index.entries_read() - first, 2u) << "bin3 and new1 only";

  std::map<std::string, SpoolEntry> by_name;
  for (const SpoolEntry& e : index.binaries()) by_name[e.directory] = e;
  EXPECT_EQ(by_name.size(), 50u);
  EXPECT_FALSE(by_name.count("bin7"));
  ASSERT_TRUE(by_name.count("new1"));
  EXPECT_EQ(by_name["new1"].last_sample_ns, 1u);
  EXPECT_EQ(by_name["bin3"].last_sample_ns, 999999u);
  EXPECT_EQ(by_name["bin3"].bytes, directory_bytes((dir / "bin3").string()));
  EXPECT_NE(by_name["bin5"].bytes, directory_bytes((dir / "bin5").string()));

  // The limits act on what the index knows, and it forgets what they removed.
  SpoolLimits limits;
  limits.expire_before_ns = 2;
  const SpoolEnforcement done = apply_spool_limits(handle, index, limits);
  ASSERT_EQ(done.evicted.size(), 1u);
  EXPECT_EQ(done.evicted[0].entry.directory, "new1");
  EXPECT_FALSE(fs::exists(dir / "new1"));
  EXPECT_EQ(index.binaries().size(), 49u);
  index.rescan(handle);
  EXPECT_EQ(index.total_bytes(), directory_bytes(dir.string()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace profcollect
