// `report` shows kernel-module samples and executable anonymous memory as perf shows them: on
// every recorded file of tests/data/perf-data with samples in modules or in JIT/anonymous code,
// its per-file counts equal `perf script -G -F ip,dso`'s dso column, name for name (a module by
// the path of the recording's build-id table or "[name]", anonymous code "/tmp/perf-PID.map").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>

#include "tests/integration/recorded_perf_data.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

// perf script's sample lines, "IP (DSO)", counted by DSO; "[unknown]" is no file.
std::map<std::string, uint64_t> perf_counts_by_dso(const std::filesystem::path& data) {
  const std::vector<std::string> argv = {"perf",   "script", "-G",         "-F",
                                         "ip,dso", "-i",     data.string()};
  const CommandResult run = run_command(argv);
  EXPECT_EQ(run.exit_code, 0) << run.describe(argv);
  std::map<std::string, uint64_t> counts;
  for (const std::string& line : split_lines(run.out)) {
    const size_t open = line.find(" ("), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    const std::string dso = line.substr(open + 2, close - open - 2);
    if (dso != "[unknown]") ++counts[dso];
  }
  return counts;
}

bool is_module_or_jit(const std::string& dso) {
  return dso.ends_with(".ko") || dso.starts_with("/tmp/perf-") ||
         (dso.starts_with("[") && dso != "[kernel.kallsyms]" && dso != "[vdso]" &&
          dso != "[vsyscall]");
}

class ReportKernelModules : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportKernelModules, CountsPerFileEqualPerfScripts) {
  if (!have_executable("perf")) GTEST_SKIP() << "perf is not installed";
  const std::filesystem::path data = recorded_perf_data_path(GetParam());
  ASSERT_TRUE(std::filesystem::exists(data)) << data;
  const std::map<std::string, uint64_t> expected = perf_counts_by_dso(data);
  bool modules_or_jit = false;
  for (const auto& [dso, n] : expected) modules_or_jit |= is_module_or_jit(dso);
  ASSERT_TRUE(modules_or_jit) << GetParam() << " has no module or JIT samples by perf script";

  const std::vector<std::string> argv = {profcollect_exe().string(), "report", "--json",
                                         data.string()};
  const CommandResult run = run_command(argv);
  ASSERT_EQ(run.exit_code, 0) << run.describe(argv);
  const nlohmann::json report = nlohmann::json::parse(run.out);
  std::map<std::string, uint64_t> reported;
  for (const auto& binary : report.at("binaries")) {
    const auto path = binary.at("path").get<std::string>();
    const auto n = binary.at("samples").get<uint64_t>();
    if (n > 0 && path != "[unknown]") reported[path] = n;
  }
  EXPECT_EQ(reported, expected);
}

// The files whose samples land in modules (file mode and pipe mode) or anonymous executable
// memory, by `perf script -F ip,dso`.
INSTANTIATE_TEST_SUITE_P(
    Recorded, ReportKernelModules,
    ::testing::Values("perf.data.busy.1-3.4", "perf.data.busy.1-3.8", "perf.data.callgraph-3.8",
                      "perf.data.callgraph_and_branch-3.4", "perf.data.forkexit-3.8",
                      "perf.data.piped.target-3.8", "perf.data.raw-3.4",
                      "perf.data.raw_callgraph_branch-3.4", "perf.data.systemwide.1-3.8",
                      "perf.data.systemwide.5-3.8", "perf.data.throttle-3.8"),
    [](const auto& info) { return recorded_perf_data_test_name(info.param); });

}  // namespace
}  // namespace profcollect::test
