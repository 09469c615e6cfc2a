// `profcollect merge` of three system-wide collections (`-a`) of two spinning fixture programs
// and whatever else ran on this machine meanwhile: several binaries, not all in every input (and,
// when a C++ program with debug info ran, AutoFDO profiles naming template instances with spaces
// and colons; the reader's part of that is unit-tested in profile_text_readers_test.cpp). Every
// binary directory of any input must be in the merged output; each bolt.fdata must hold the
// per-line sums of the inputs' (the test's own reader; merge-fdata refuses no_lbr), and each
// autofdo.prof must equal `llvm-profdata-19 merge --sample --text` of the inputs' as written
// (llvm-profdata cannot read an empty profile, so a binary with one is judged by its fdata only).
#include <gtest/gtest.h>

#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/live_support.h"
#include "tests/integration/merge_judges.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

class MergeSystemWideTest : public LiveFixtureTest {};

TEST_F(MergeSystemWideTest, EveryBinaryOfEveryHostAddsUp) {
  if (!have_executable("llvm-profdata-19")) GTEST_SKIP() << "llvm-profdata-19 is not installed";
  TempDir tmp;
  std::vector<fs::path> hosts;
  for (int i = 1; i <= 3; ++i) {
    hosts.push_back(tmp / ("host" + std::to_string(i)));
    // Two programs with debug info spin meanwhile, whatever else runs on the machine, so that
    // every host has at least two binaries (profcollect does not profile itself).
    BackgroundProcess spin = start_target(fixture("live_spin"), {"a", "0"});
    BackgroundProcess hot = start_target(fixture("hot"), {"100000000"});
    const ProfcollectRun run = run_profcollect(
        {"-q", "-a", "-e", "cpu-clock", "--duration", "1", "-o", hosts.back().string()});
    ASSERT_EQ(run.run.exit_code, 0) << run.describe();
  }
  std::map<std::string, std::vector<fs::path>> inputs;  // binary directory name -> its directories
  for (const auto& host : hosts) {
    for (const auto& e : fs::directory_iterator(host)) {
      if (e.is_directory() && !e.path().filename().string().starts_with(".")) {
        inputs[e.path().filename().string()].push_back(e.path());
      }
    }
  }
  ASSERT_GE(inputs.size(), 2u) << "too few binaries sampled";

  const fs::path out = tmp / "merged";
  const ProfcollectRun merge = run_merge(out, hosts);
  ASSERT_EQ(merge.run.exit_code, 0) << merge.describe();
  size_t profiles_judged = 0;
  for (const auto& [name, dirs] : inputs) {
    SCOPED_TRACE(name);
    const fs::path merged = out / name;
    ASSERT_TRUE(fs::is_directory(merged));
    std::vector<fs::path> fdatas, profiles;
    bool every_profile_readable = true;
    for (const auto& dir : dirs) {
      fdatas.push_back(dir / "bolt.fdata");
      if (!fs::exists(dir / "autofdo.prof")) continue;
      profiles.push_back(dir / "autofdo.prof");
      every_profile_readable = every_profile_readable && fs::file_size(dir / "autofdo.prof") > 0;
    }
    EXPECT_EQ(parse_no_lbr_fdata(read_file(merged / "bolt.fdata")).counts, summed_no_lbr(fdatas));
    if (profiles.empty() || !every_profile_readable) continue;
    const std::string reference = llvm_profdata_merge(profiles, tmp / (name + ".reference.prof"));
    const std::string ours = read_file(merged / "autofdo.prof");
    EXPECT_EQ(ours, reference) << profile_difference(ours, reference);
    ++profiles_judged;
  }
  EXPECT_GT(profiles_judged, 0u) << "no AutoFDO profile was judged";
}

}  // namespace
}  // namespace profcollect::test
