// The profile directory codec (output/profile_directory.h) checks each file against the totals
// meta.json gives: a bolt.fdata, samples.ip or meta.json truncated at a line boundary or cut
// mid-line is refused by merge (naming the file and why), set aside by the store (the next
// flush does not carry the loss on), and described by `report DIR`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "collector/cli/cli_error.h"
#include "collector/cli/report_directory.h"
#include "output/profile_directory.h"
#include "output/profile_merge.h"
#include "tests/unit/profile_directory_fixtures.h"

namespace profcollect {
namespace {

using namespace profcollect::test;

struct Damage {
  const char* file;
  std::string (*cut)(const std::string&);
  const char* how;
};

const Damage kDamages[] = {
    {"bolt.fdata", without_last_line, "truncated at a line boundary"},
    {"bolt.fdata", cut_mid_line, "cut mid-line"},
    {"samples.ip", without_last_line, "truncated at a line boundary"},
    {"samples.ip", cut_mid_line, "cut mid-line"},
    {"meta.json", without_last_line, "truncated at a line boundary"},
    {"meta.json", cut_mid_line, "cut mid-line"},
};

// OUTPUT/app-<id>/ written by two flushes, then `damage` done to one of its files.
fs::path damaged_app(const fs::path& output, const Damage& damage) {
  write_app(output, app_run(1));
  const fs::path sub = write_app(output, app_run(2));
  put(sub / damage.file, damage.cut(slurp(sub / damage.file)));
  return sub;
}

std::string context(const Damage& d) { return std::string(d.file) + " " + d.how; }

TEST(ProfileDirectoryTotals, MergeRefusesATruncatedFileNamingIt) {
  for (const Damage& damage : kDamages) {
    ScratchDirectory dir;
    const fs::path sub = damaged_app(dir.path / "in", damage);
    try {
      merge_profile_directories({(dir.path / "in").string()}, (dir.path / "out").string());
      ADD_FAILURE() << context(damage) << ": merged";
    } catch (const OutputError& e) {
      EXPECT_EQ(e.path(), (sub / damage.file).string()) << context(damage) << ": " << e.what();
    }
    EXPECT_FALSE(fs::exists(dir.path / "out" / sub.filename())) << context(damage);
  }
}

TEST(ProfileDirectoryTotals, TheStoreSetsATruncatedDirectoryAsideAndDoesNotCarryTheLossOn) {
  for (const Damage& damage : kDamages) {
    ScratchDirectory dir;
    const fs::path sub = damaged_app(dir.path, damage);
    ProfileStore store(dir.path.string());
    store.write_binary(app_run(5));
    const auto warnings = store.take_warnings();
    ASSERT_EQ(warnings.size(), 1u) << context(damage);
    EXPECT_NE(warnings[0].find((sub / damage.file).string()), std::string::npos) << warnings[0];
    // The new generation counts this run alone, and every file of it says so.
    const auto meta = nlohmann::json::parse(slurp(sub / "meta.json"));
    EXPECT_EQ(meta.at("samples"), 35u) << context(damage);
    const std::optional<DirectoryHandle> handle =
        DirectoryHandle::open_path(dir.path.string(), 0700)
            .open_subdirectory(sub.filename().string());
    ASSERT_TRUE(handle);
    const ProfileDirectory read = read_profile_directory(*handle, DirectoryStrictness::Merge);
    EXPECT_EQ(read.totals.at("bolt.fdata"), 35u) << context(damage);
    EXPECT_EQ(read.totals.at("samples.ip"), 35u) << context(damage);
    EXPECT_FALSE(read.set_aside.empty()) << context(damage);
  }
}

TEST(ProfileDirectoryTotals, ReportDescribesATruncatedFile) {
  for (const Damage& damage : kDamages) {
    ScratchDirectory dir;
    const fs::path sub = damaged_app(dir.path, damage);
    ReportOptions options;
    options.input = dir.path.string();
    options.json = true;
    testing::internal::CaptureStdout();
    EXPECT_THROW(run_directory_report(options), CliError) << context(damage);
    const auto report = nlohmann::json::parse(testing::internal::GetCapturedStdout());
    bool named = false;
    for (const auto& problem : report.at("problems")) {
      named |= problem.get<std::string>().starts_with((sub / damage.file).string() + ": ");
    }
    EXPECT_TRUE(named) << context(damage) << ": " << report.at("problems").dump();
  }
}

TEST(ProfileDirectoryTotals, AnUndamagedDirectoryReadsWithItsTotals) {
  ScratchDirectory dir;
  write_app(dir.path, app_run(1));
  const fs::path sub = write_app(dir.path, app_run(2));
  const auto meta = nlohmann::json::parse(slurp(sub / "meta.json"));
  // 3 + 4 samples, then 6 + 8: each file counts every one.
  EXPECT_EQ(meta.at("samples"), 21u);
  EXPECT_EQ(meta.at("file_totals").at("bolt.fdata"), 21u);
  EXPECT_EQ(meta.at("file_totals").at("samples.ip"), 21u);
  EXPECT_NO_THROW(merge_profile_directories({dir.path.string()}, (dir.path / "out").string()));
}

TEST(ProfileDirectoryTotals, ReportNeverFollowsALinkedFile) {
  ScratchDirectory dir;
  const fs::path sub = write_app(dir.path / "out", app_run(1));
  // A meta.json elsewhere, sound, linked in place of the directory's own.
  fs::rename(sub / "meta.json", dir.path / "elsewhere.json");
  fs::create_symlink(dir.path / "elsewhere.json", sub / "meta.json");
  ReportOptions options;
  options.input = (dir.path / "out").string();
  options.json = true;
  testing::internal::CaptureStdout();
  EXPECT_THROW(run_directory_report(options), CliError);
  const auto report = nlohmann::json::parse(testing::internal::GetCapturedStdout());
  ASSERT_EQ(report.at("binaries").size(), 1u);
  EXPECT_EQ(report.at("binaries")[0].at("samples"), 0u) << "the linked meta.json was read";
  EXPECT_EQ(report.at("problems")[0],
            (sub / "meta.json").string() + ": is a symbolic link: not followed");
}

}  // namespace
}  // namespace profcollect
