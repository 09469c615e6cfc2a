// Acceptance 7: `profcollect report --json` counts what perf script counts: every sample, and
// per binary the samples perf script's dso column gives it, with the build-id perf recorded.
// With BINARY: the samples mapped into it and per function as perf script symbolizes them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"
#include "tests/integration/perf_script_oracle.h"

namespace profcollect::test {
namespace {

using nlohmann::json;

class ConvertReportTest : public ConvertFixtureTest {
 protected:
  // `report ARGS... --json`, parsed; fails the test when it is not JSON or did not succeed.
  static std::optional<json> report_json(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"report"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--json");
    const ProfcollectRun run = run_profcollect(argv);
    EXPECT_EQ(run.run.exit_code, 0) << run.describe();
    json parsed = json::parse(run.run.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << "stdout is not JSON: " << run.describe();
    if (run.run.exit_code != 0 || parsed.is_discarded()) return std::nullopt;
    return parsed;
  }

  // perf's "[unknown]" is not a binary; report has no obligation to list it.
  static std::map<std::string, uint64_t> perf_counts_by_dso(
      const std::vector<PerfScriptSample>& samples) {
    std::map<std::string, uint64_t> counts;
    for (const auto& sample : samples)
      if (sample.dso != "[unknown]") ++counts[sample.dso];
    return counts;
  }

  // `perf buildid-list`: path -> build-id as perf recorded them in the file.
  static std::map<std::string, std::string> perf_build_ids(const std::filesystem::path& data) {
    const std::vector<std::string> argv = {"perf", "buildid-list", "-i", data.string()};
    const CommandResult run = run_command(argv);
    EXPECT_EQ(run.exit_code, 0) << run.describe(argv);
    std::map<std::string, std::string> ids;
    for (const auto& line : split_lines(run.out)) {
      const size_t space = line.find(' ');
      if (space != std::string::npos) ids[line.substr(space + 1)] = line.substr(0, space);
    }
    return ids;
  }

  // Checks `report DATA --json` against perf script and perf buildid-list; `binary_name`, unless
  // empty, is a file whose build-id must be reported.
  void expect_counts_equal_perf_scripts(const std::string& data_name,
                                        const std::string& binary_name) {
    const auto data = fixture(data_name);
    std::string error;
    const auto samples = perf_script_samples(data, error);
    ASSERT_TRUE(samples) << error;
    const auto report = report_json({data.string()});
    ASSERT_TRUE(report);

    ASSERT_TRUE(report->contains("samples") && report->contains("lost") &&
                report->contains("binaries"))
        << report->dump(2);
    EXPECT_EQ((*report)["samples"].get<uint64_t>(), samples->size())
        << "total samples vs perf script's sample lines";

    // What the LOST and LOST_SAMPLES records of `perf report -D` say was lost: usually none, but
    // a fixture recorded on a loaded machine may have overrun, and the figure must be perf's then.
    const std::vector<std::string> dump_argv = perf_dump_command(data.string());
    const CommandResult dump = run_command(dump_argv);
    ASSERT_EQ(dump.exit_code, 0) << dump.describe(dump_argv);
    const PerfDump perf_dump = parse_perf_dump(dump.out);
    EXPECT_EQ((*report)["lost"].get<uint64_t>(), perf_dump.lost + perf_dump.lost_samples);

    std::map<std::string, uint64_t> reported;
    std::map<std::string, std::string> reported_build_ids;
    for (const auto& binary : (*report)["binaries"]) {
      const auto path = binary.at("path").get<std::string>();
      const auto count = binary.at("samples").get<uint64_t>();
      EXPECT_FALSE(reported.contains(path)) << "listed twice: " << path;
      if (count > 0) reported[path] = count;
      if (binary.contains("build_id") && binary["build_id"].is_string() &&
          !binary["build_id"].get<std::string>().empty())
        reported_build_ids[path] = binary["build_id"].get<std::string>();
    }
    EXPECT_EQ(reported, perf_counts_by_dso(*samples))
        << "per-binary samples vs perf script's dso column\n"
        << report->dump(2);

    const auto perf_ids = perf_build_ids(data);
    if (!binary_name.empty()) {
      ASSERT_TRUE(perf_ids.contains(binary_name)) << binary_name << " not in perf buildid-list";
      EXPECT_EQ(reported_build_ids[binary_name], perf_ids.at(binary_name))
          << "build-id of " << binary_name;
    }
    for (const auto& [path, id] : reported_build_ids) {
      if (perf_ids.contains(path)) {
        EXPECT_EQ(id, perf_ids.at(path)) << "build-id of " << path;
      }
    }
  }
};

TEST_F(ConvertReportTest, CountsEqualPerfScripts) {
  expect_counts_equal_perf_scripts("hot_gcc.data", fixture("hot_gcc").string());
}

// Many kernel samples (and a system binary with libc): the kernel is "[kernel.kallsyms]".
TEST_F(ConvertReportTest, CountsEqualPerfScriptsWithKernelSamples) {
  std::string error;
  const auto samples = perf_script_samples(fixture("sys.data"), error);
  ASSERT_TRUE(samples) << error;
  ASSERT_TRUE(perf_counts_by_dso(*samples).contains("[kernel.kallsyms]"))
      << "the fixture should have kernel samples";
  expect_counts_equal_perf_scripts("sys.data", "");
}

TEST_F(ConvertReportTest, WithBinaryCountsMappedSamplesPerFunctionAsPerfScript) {
  const auto data = fixture("lib.data");
  const auto binary = fixture("libwork.so");
  std::string error;
  const auto samples = perf_script_samples(data, error);
  ASSERT_TRUE(samples) << error;
  const auto report = report_json({data.string(), binary.string()});
  ASSERT_TRUE(report);
  ASSERT_TRUE(report->contains("binary") && (*report)["binary"].contains("mapped") &&
              (*report)["binary"].contains("unmapped") && (*report)["binary"].contains("functions"))
      << report->dump(2);

  uint64_t in_binary = 0;
  std::map<std::string, uint64_t> expected_functions;
  for (const auto& sample : *samples) {
    if (sample.dso != binary.string()) continue;
    ++in_binary;
    if (!sample.symbol.empty()) ++expected_functions[sample.symbol];
  }
  ASSERT_GT(in_binary, 0u);
  EXPECT_EQ((*report)["binary"]["mapped"].get<uint64_t>(), in_binary)
      << "mapped vs perf script's samples in " << binary;

  uint64_t unmapped = 0;
  for (const auto& [reason, count] : (*report)["binary"]["unmapped"].items())
    unmapped += count.get<uint64_t>();
  EXPECT_EQ(in_binary + unmapped, samples->size()) << "mapped + unmapped should be every sample";

  std::map<std::string, uint64_t> functions;
  std::vector<std::pair<double, double>> share_and_samples;
  for (const auto& function : (*report)["binary"]["functions"]) {
    functions[function.at("name").get<std::string>()] += function.at("samples").get<uint64_t>();
    share_and_samples.emplace_back(function.at("share").get<double>(),
                                   function.at("samples").get<double>());
  }
  EXPECT_EQ(functions, expected_functions) << "per-function samples vs perf script's symbols";
  // Whatever its unit, a share is proportional to the function's samples.
  ASSERT_FALSE(share_and_samples.empty());
  const double unit = share_and_samples.front().first / share_and_samples.front().second;
  for (const auto& [share, count] : share_and_samples)
    EXPECT_NEAR(share, unit * count, 1e-6 * std::max(1.0, share)) << report->dump(2);
}

}  // namespace
}  // namespace profcollect::test
