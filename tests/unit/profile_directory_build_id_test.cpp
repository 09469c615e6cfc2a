// The profile directory codec (output/profile_directory.h) holds a directory to its name: the
// build-id in <basename>-<build-id> must be meta.json's. A directory of another build's profile
// under this build's name (a copy, a rename) is refused by merge, set aside by the store and
// described by `report DIR`, never added to this build's counts.
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

// OUTPUT/app-<kBuildId>/ holding the profile of the build kOtherBuildId.
fs::path misnamed_app(const fs::path& output) {
  const fs::path other = write_app(output, app_run(1, kOtherBuildId));
  const fs::path sub = output / app().directory_name();
  fs::rename(other, sub);
  return sub;
}

TEST(ProfileDirectoryBuildId, MergeRefusesADirectoryWhoseMetaJsonNamesAnotherBuild) {
  ScratchDirectory dir;
  const fs::path sub = misnamed_app(dir.path / "in");
  try {
    merge_profile_directories({(dir.path / "in").string()}, (dir.path / "out").string());
    ADD_FAILURE() << "merged";
  } catch (const OutputError& e) {
    EXPECT_EQ(e.path(), (sub / "meta.json").string()) << e.what();
    EXPECT_NE(std::string(e.what()).find(kOtherBuildId), std::string::npos) << e.what();
  }
}

TEST(ProfileDirectoryBuildId, TheStoreSetsItAsideAndCountsThisBuildAlone) {
  ScratchDirectory dir;
  const fs::path sub = misnamed_app(dir.path);
  ProfileStore store(dir.path.string());
  store.write_binary(app_run(2));
  const auto warnings = store.take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find((sub / "meta.json").string()), std::string::npos) << warnings[0];
  const auto meta = nlohmann::json::parse(slurp(sub / "meta.json"));
  EXPECT_EQ(meta.at("build_id"), kBuildId);
  EXPECT_EQ(meta.at("samples"), 14u) << "the other build's 7 samples were added";
}

TEST(ProfileDirectoryBuildId, ReportDescribesIt) {
  ScratchDirectory dir;
  const fs::path sub = misnamed_app(dir.path);
  ReportOptions options;
  options.input = dir.path.string();
  options.json = true;
  testing::internal::CaptureStdout();
  EXPECT_THROW(run_directory_report(options), CliError);
  const auto report = nlohmann::json::parse(testing::internal::GetCapturedStdout());
  ASSERT_EQ(report.at("problems").size(), 1u) << report.at("problems").dump();
  EXPECT_TRUE(report.at("problems")[0].get<std::string>().starts_with(
      (sub / "meta.json").string() + ": build-id " + kOtherBuildId));
}

}  // namespace
}  // namespace profcollect
