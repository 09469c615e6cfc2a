// Acceptance 1: the seed case. perf2bolt 19 maps none of the samples of a small clang/lld PIE
// (and of the same linked with 64 KiB pages); profcollect must put every sample that perf script
// places in a function of the binary on the same function and offset.
#include <gtest/gtest.h>

#include <regex>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"

namespace profcollect::test {
namespace {

class ConvertSeedTest : public ConvertFixtureTest,
                        public ::testing::WithParamInterface<std::string> {};

TEST_P(ConvertSeedTest, Perf2BoltMapsNoneButWeMapEverySamplePerfScriptSymbolizes) {
  REQUIRE_TOOL(kPerf2Bolt);
  const auto binary = fixture(GetParam());
  const auto data = fixture(GetParam() + ".data");
  TempDir tmp;

  // The bug this project exists for: perf2bolt finds 100% of the samples out of range.
  const Perf2BoltRun reference = run_perf2bolt(data, binary, tmp / "perf2bolt.fdata");
  ASSERT_EQ(reference.run.exit_code, 0) << reference.run.describe(reference.argv);
  std::smatch match;
  const std::string perf2bolt_says = reference.run.out + reference.run.err;
  ASSERT_TRUE(std::regex_search(
      perf2bolt_says, match,
      std::regex(R"(out of range samples recorded in unknown regions: (\d+) \(100\.0%\))")))
      << "perf2bolt maps this binary now; the seed case no longer shows the bug:\n"
      << reference.run.describe(reference.argv);
  EXPECT_GT(std::stoull(match[1].str()), 0u);
  const NoLbrFdata reference_fdata = parse_no_lbr_fdata(reference.fdata);
  EXPECT_TRUE(reference_fdata.counts.empty()) << reference.fdata;

  const auto ours_path = tmp / "ours.fdata";
  const ProfcollectRun ours = run_profcollect(
      {"convert", "-p", data.string(), "-o", ours_path.string(), "-nl", binary.string()});
  ASSERT_EQ(ours.run.exit_code, 0) << ours.describe();
  const NoLbrFdata fdata = parse_no_lbr_fdata(read_file(ours_path));
  EXPECT_EQ(fdata.header, reference_fdata.header) << "header line differs from perf2bolt's";
  EXPECT_TRUE(fdata.malformed_lines.empty())
      << "not `1 <function> <hex offset> <count>`: " << fdata.malformed_lines.front();

  std::string error;
  const auto symbols = BinarySymbols::load(binary, error);
  ASSERT_TRUE(symbols) << error;
  const auto samples = perf_script_samples(data, error);
  ASSERT_TRUE(samples) << error;
  uint64_t perf_unknown = 0;
  const SiteCounts expected = perf_sites(*samples, binary, *symbols, 0, perf_unknown, error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_FALSE(expected.empty()) << "perf script puts no sample in " << binary;
  const SiteCounts actual = fdata_sites(fdata, *symbols, error);
  EXPECT_TRUE(error.empty()) << error;

  // Every site perf script names must carry the same count in our profile.
  SiteCounts actual_at_perf_sites, actual_elsewhere;
  for (const auto& [site, count] : actual)
    (expected.contains(site) ? actual_at_perf_sites : actual_elsewhere)[site] = count;
  EXPECT_EQ(actual_at_perf_sites, expected)
      << "(function, offset) counts differ from perf script's:\n"
      << site_differences(expected, actual_at_perf_sites);

  // We may place samples perf script could not name (a PLT without symbols), but no more than
  // perf left [unknown] in this binary.
  uint64_t elsewhere = 0;
  for (const auto& [site, count] : actual_elsewhere) elsewhere += count;
  EXPECT_LE(elsewhere, perf_unknown)
      << "our fdata has samples at sites perf script does not have:\n"
      << site_differences({}, actual_elsewhere);
}

INSTANTIATE_TEST_SUITE_P(SeedBinaries, ConvertSeedTest,
                         ::testing::Values("hot_clang", "hot_clang64k"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace profcollect::test
