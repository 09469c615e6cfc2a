// `-e spe` on this machine (no SPE PMU: a virtual x86-64 machine) and `-e auto` here: a clear
// refusal naming what was looked at, and auto never takes SPE.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

bool machine_has_spe() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/bus/event_source/devices", ec)) {
    if (e.path().filename().string().starts_with("arm_spe_")) return true;
  }
  return false;
}

TEST(SpeEventCli, SpeOnAMachineWithoutItSaysSo) {
  if (machine_has_spe()) GTEST_SKIP() << "this machine has an SPE PMU";
  TempDir tmp;
  const std::vector<std::string> argv = {profcollect_exe().string(), "-e", "spe", "-o",
                                         (tmp / "out").string(),     "--", "true"};
  const CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 2) << r.describe(argv);
  EXPECT_NE(r.err.find("-e spe: this machine has no Arm SPE PMU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/sys/bus/event_source/devices"), std::string::npos) << r.err;
}

TEST(SpeEventCli, AutoNeverPicksSpeHere) {
  if (machine_has_spe()) GTEST_SKIP() << "this machine has an SPE PMU";
  TempDir tmp;
  const std::vector<std::string> argv = {profcollect_exe().string(), "-e", "auto", "-o",
                                         (tmp / "out").string(),     "--", "true"};
  const CommandResult r = run_command(argv);
  ASSERT_EQ(r.exit_code, 0) << r.describe(argv);
  const std::string text = read_file(tmp / "out" / "collection.json");
  const nlohmann::json collection = nlohmann::json::parse(text);
  // What was chosen, not what was probed: branch_hardware_probed names the arm_spe_N it looked for.
  EXPECT_FALSE(collection.contains("arm_spe")) << text;
  EXPECT_EQ(collection.value("event", "").find("arm_spe"), std::string::npos) << text;
  // The run's line stays short; what auto looked at is kept in collection.json.
  EXPECT_NE(collection.value("branch_hardware_probed", "").find("no Arm SPE PMU"),
            std::string::npos)
      << "auto says what it looked at: " << text;
  EXPECT_NE(r.err.find("no branch-stack hardware"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace profcollect::test
