// Acceptance 2 and 3: where perf2bolt maps the binary (gcc builds: page-aligned segments), our
// fdata equals perf2bolt -nl's line for line, header included: a gcc program, same-named static
// functions (BOLT's `name/N`, counting a same-named data object below them), a program whose hot
// code is in a shared library (both the program and the library as BINARY).
#include <gtest/gtest.h>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"

namespace profcollect::test {
namespace {

class ConvertMatchesPerf2BoltTest : public ConvertFixtureTest {
 protected:
  // Converts `data` for `binary` with both tools and compares the sorted lines.
  void expect_same_fdata(const std::string& data_name, const std::string& binary_name) {
    const auto data = fixture(data_name);
    const auto binary = fixture(binary_name);
    TempDir tmp;
    const Perf2BoltRun reference = run_perf2bolt(data, binary, tmp / "perf2bolt.fdata");
    ASSERT_EQ(reference.run.exit_code, 0) << reference.run.describe(reference.argv);
    ASSERT_GT(parse_no_lbr_fdata(reference.fdata).counts.size(), 0u)
        << "perf2bolt maps nothing here, so it cannot be the reference";

    const auto ours_path = tmp / "ours.fdata";
    const ProfcollectRun ours = run_profcollect(
        {"convert", "-p", data.string(), "-o", ours_path.string(), "-nl", binary.string()});
    ASSERT_EQ(ours.run.exit_code, 0) << ours.describe();
    const auto expected = sorted_lines(reference.fdata);
    const auto actual = sorted_lines(read_file(ours_path));
    EXPECT_EQ(actual, expected) << "fdata for " << binary_name << " from " << data_name
                                << " differs from perf2bolt -nl:\n"
                                << line_differences(expected, actual);
  }

  void SetUp() override {
    ConvertFixtureTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (tool_missing(kPerf2Bolt)) GTEST_SKIP() << kPerf2Bolt << " is not installed";
  }
};

TEST_F(ConvertMatchesPerf2BoltTest, GccProgram) { expect_same_fdata("hot_gcc.data", "hot_gcc"); }

TEST_F(ConvertMatchesPerf2BoltTest, SameNamedStaticFunctionsAndDataObject) {
  expect_same_fdata("dup.data", "dup");
}

TEST_F(ConvertMatchesPerf2BoltTest, ProgramWhoseHotCodeIsInASharedLibrary) {
  expect_same_fdata("lib.data", "libmain");
}

TEST_F(ConvertMatchesPerf2BoltTest, SharedLibraryAsBinary) {
  expect_same_fdata("lib.data", "libwork.so");
}

TEST_F(ConvertMatchesPerf2BoltTest, TwoProcessesWithoutPidFilter) {
  expect_same_fdata("two.data", "hot_gcc");
}

// -q: a successful conversion says nothing (and the long spelling --nl works).
TEST_F(ConvertMatchesPerf2BoltTest, QuietConversionPrintsNothing) {
  TempDir tmp;
  const auto out = tmp / "ours.fdata";
  const ProfcollectRun ours =
      run_profcollect({"convert", "-p", fixture("hot_gcc.data").string(), "-o", out.string(),
                       "--nl", "-q", fixture("hot_gcc").string()});
  ASSERT_EQ(ours.run.exit_code, 0) << ours.describe();
  EXPECT_EQ(ours.run.out, "");
  EXPECT_EQ(ours.run.err, "");
  EXPECT_FALSE(parse_no_lbr_fdata(read_file(out)).counts.empty());
}

}  // namespace
}  // namespace profcollect::test
