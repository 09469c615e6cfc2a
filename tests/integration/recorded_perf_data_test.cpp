// The recorded perf.data files are all there and described as perf sees them: the directory
// holds exactly the files the list names (so no parameterized case can vanish or be forgotten),
// and the list's branch-stack flag is what `perf evlist -v` says of each file's attrs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/integration/perf_script_oracle.h"
#include "tests/integration/recorded_perf_data.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

TEST(RecordedPerfData, DirectoryHoldsExactlyTheListedFiles) {
  ASSERT_TRUE(fs::is_directory(recorded_perf_data_dir())) << recorded_perf_data_dir();
  std::vector<std::string> present;
  for (const auto& e : fs::directory_iterator(recorded_perf_data_dir())) {
    const std::string name = e.path().filename().string();
    if (name.rfind("perf.data", 0) == 0) present.push_back(name);
  }
  std::sort(present.begin(), present.end());
  EXPECT_EQ(present, recorded_perf_data_names());
  EXPECT_EQ(recorded_perf_data().size(), 42u);
  EXPECT_TRUE(fs::is_regular_file(recorded_perf_data_dir() / "LICENSE.perf_data_converter"));
  EXPECT_TRUE(fs::is_regular_file(recorded_perf_data_dir() / "README.md"));
}

TEST(RecordedPerfData, BranchStackFlagIsWhatPerfEvlistSays) {
  if (!have_executable("perf")) GTEST_SKIP() << "perf is not installed";
  size_t judged = 0;
  for (const RecordedPerfData& f : recorded_perf_data()) {
    const fs::path path = recorded_perf_data_path(f.name);
    ASSERT_TRUE(fs::is_regular_file(path)) << path;
    const std::vector<std::string> attrs = perf_evlist(path.string());
    // perf 6.1's evlist prints nothing for some pipe-mode files (their attrs come as records):
    // those are judged by perf script in the reader's comparison, where a branch stack shows.
    if (attrs.empty()) {
      EXPECT_NE(f.name.find("piped"), std::string::npos)
          << "perf evlist -v printed no attr for " << f.name;
      EXPECT_FALSE(f.branch_stack) << f.name;
      continue;
    }
    ++judged;
    bool branch = false;
    for (const std::string& line : attrs)
      branch =
          branch || evlist_field(line, "sample_type").find("BRANCH_STACK") != std::string::npos;
    EXPECT_EQ(branch, f.branch_stack) << f.name;
  }
  EXPECT_GE(judged, 38u);
}

}  // namespace
}  // namespace profcollect::test
