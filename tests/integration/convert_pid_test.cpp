// Acceptance 5: --pid N keeps only process N's samples. Two runs of the same program were
// recorded together; each one's fdata must equal perf script's samples of that pid.
#include <gtest/gtest.h>

#include <set>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"

namespace profcollect::test {
namespace {

class ConvertPidTest : public ConvertFixtureTest {};

TEST_F(ConvertPidTest, EachProcessAloneMatchesPerfScriptFilteredByPid) {
  const auto binary = fixture("hot_gcc");
  const auto data = fixture("two.data");
  std::string error;
  const auto symbols = BinarySymbols::load(binary, error);
  ASSERT_TRUE(symbols) << error;
  const auto samples = perf_script_samples(data, error);
  ASSERT_TRUE(samples) << error;

  std::set<uint32_t> pids;
  for (const auto& sample : *samples)
    if (sample.dso == binary.string()) pids.insert(sample.pid);
  ASSERT_EQ(pids.size(), 2u) << "the recording should hold two processes of " << binary;

  TempDir tmp;
  std::vector<SiteCounts> per_process;
  for (const uint32_t pid : pids) {
    SCOPED_TRACE("pid " + std::to_string(pid));
    uint64_t unknown = 0;
    const SiteCounts expected = perf_sites(*samples, binary, *symbols, pid, unknown, error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_FALSE(expected.empty());

    const auto out = tmp / ("pid" + std::to_string(pid) + ".fdata");
    const ProfcollectRun ours =
        run_profcollect({"convert", "-p", data.string(), "-o", out.string(), "-nl", "--pid",
                         std::to_string(pid), binary.string()});
    ASSERT_EQ(ours.run.exit_code, 0) << ours.describe();
    const NoLbrFdata fdata = parse_no_lbr_fdata(read_file(out));
    EXPECT_TRUE(fdata.malformed_lines.empty()) << fdata.malformed_lines.front();
    const SiteCounts actual = fdata_sites(fdata, *symbols, error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(actual, expected) << "--pid " << pid << " vs perf script of that pid:\n"
                                << site_differences(expected, actual);
    per_process.push_back(actual);
  }
  // The filter must change something: the two processes' profiles are not the same counts.
  EXPECT_NE(per_process[0], per_process[1]);
}

}  // namespace
}  // namespace profcollect::test
