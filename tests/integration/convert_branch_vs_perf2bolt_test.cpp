// `profcollect convert` on branch-stack perf.data recorded from real executions (branch_recorder),
// judged by perf2bolt 19 on the same file: branch fdata equal line for line (sorted), and our
// pre-aggregated file through `perf2bolt --pa` gives perf2bolt's fdata too.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/integration/branch_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
const char* const kPerf2Bolt = "/usr/lib/llvm-19/bin/perf2bolt";

std::vector<std::string> sorted_lines(const fs::path& p) {
  auto lines = split_lines(read_file(p));
  std::sort(lines.begin(), lines.end());
  return lines;
}

class ConvertBranchVsPerf2bolt : public BranchFixtureTest,
                                 public ::testing::WithParamInterface<BranchCase> {};

TEST_P(ConvertBranchVsPerf2bolt, FdataAndPreaggEqualPerf2bolt) {
  if (!have_executable(kPerf2Bolt)) GTEST_SKIP() << kPerf2Bolt << " is not installed";
  const auto& c = GetParam();
  TempDir dir;
  fs::path data = fixture(c.data), bin = fixture(c.binary);
  fs::path ours = dir / "ours.fdata", ref = dir / "ref.fdata", preagg = dir / "ours.preagg",
           via_pa = dir / "pa.fdata";
  std::vector<std::string> conv = {profcollect_exe().string(),
                                   "convert",
                                   "-q",
                                   "-p",
                                   data.string(),
                                   "-o",
                                   ours.string(),
                                   bin.string()};
  auto r = run_command(conv);
  ASSERT_EQ(r.exit_code, 0) << r.describe(conv);
  std::vector<std::string> judge = {kPerf2Bolt, "-p",         data.string(),
                                    "-o",       ref.string(), bin.string()};
  auto j = run_command(judge, {.cwd = dir.path()});
  ASSERT_EQ(j.exit_code, 0) << j.describe(judge);
  auto ours_lines = sorted_lines(ours), ref_lines = sorted_lines(ref);
  ASSERT_GT(ref_lines.size(), 3u) << "perf2bolt found too little to compare";
  EXPECT_EQ(ours_lines, ref_lines);

  std::vector<std::string> pa = {profcollect_exe().string(),
                                 "convert",
                                 "-q",
                                 "-p",
                                 data.string(),
                                 "--format",
                                 "preagg",
                                 "-o",
                                 preagg.string(),
                                 bin.string()};
  auto p = run_command(pa);
  ASSERT_EQ(p.exit_code, 0) << p.describe(pa);
  std::vector<std::string> judge_pa = {kPerf2Bolt, "--pa",          "-p",        preagg.string(),
                                       "-o",       via_pa.string(), bin.string()};
  auto jp = run_command(judge_pa, {.cwd = dir.path()});
  ASSERT_EQ(jp.exit_code, 0) << jp.describe(judge_pa);
  EXPECT_EQ(sorted_lines(via_pa), ours_lines);
}

INSTANTIATE_TEST_SUITE_P(Programs, ConvertBranchVsPerf2bolt, ::testing::ValuesIn(branch_cases()),
                         branch_case_name);

}  // namespace
}  // namespace profcollect::test
