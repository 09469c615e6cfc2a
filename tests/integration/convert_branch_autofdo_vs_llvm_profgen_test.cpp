// `profcollect convert --format autofdo` on branch-stack perf.data recorded from real executions
// (branch_recorder), judged by llvm-profgen-19 reading the same perf.data itself (it runs
// `perf script`): both profiles, rewritten by `llvm-profdata-19 merge --sample --text`, equal.
#include <algorithm>

#include <gtest/gtest.h>

#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/branch_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

// The body samples of a text profile's top-level functions ("name:total:head" lines), so that a
// judge that found nothing cannot make the comparison pass.
uint64_t total_samples(const std::string& text_profile) {
  uint64_t total = 0;
  for (const std::string& line : split_lines(text_profile)) {
    if (line.empty() || line[0] == ' ') continue;
    const size_t last = line.rfind(':');
    if (last == std::string::npos || last == 0) continue;
    const size_t first = line.rfind(':', last - 1);
    if (first == std::string::npos) continue;
    total += std::stoull(line.substr(first + 1, last - first - 1));
  }
  return total;
}

class ConvertBranchAutofdoVsLlvmProfgen : public BranchFixtureTest,
                                          public ::testing::WithParamInterface<BranchCase> {};

TEST_P(ConvertBranchAutofdoVsLlvmProfgen, ProfileEqualsLlvmProfgens) {
  for (const char* tool : {"llvm-profgen-19", "llvm-profdata-19", "perf"}) {
    if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
  }
  const auto& c = GetParam();
  TempDir dir;
  const fs::path data = fixture(c.data), binary = fixture(c.binary), ours = dir / "ours.prof";

  const std::vector<std::string> convert = {profcollect_exe().string(),
                                            "convert",
                                            "-q",
                                            "-p",
                                            data.string(),
                                            "--format",
                                            "autofdo",
                                            "-o",
                                            ours.string(),
                                            binary.string()};
  const CommandResult run = run_command(convert);
  ASSERT_EQ(run.exit_code, 0) << run.describe(convert);

  const std::string reference = normalize_profile(
      run_llvm_profgen({"--perfdata=" + data.string(), "--binary=" + binary.string()}, dir.path()),
      dir.path());
  ASSERT_GT(total_samples(reference), 0u) << "llvm-profgen found no samples to compare:\n"
                                          << reference;
  const std::string ours_text = normalize_profile(read_file(ours), dir.path());
  EXPECT_EQ(profile_difference(ours_text, reference), "");
}

INSTANTIATE_TEST_SUITE_P(Programs, ConvertBranchAutofdoVsLlvmProfgen,
                         ::testing::ValuesIn(branch_cases()), branch_case_name);

}  // namespace
}  // namespace profcollect::test
