// `profcollect -e lbr|brs|auto` on this machine, judged by what perf record can open here: where
// perf cannot sample branch stacks on cycles, `-e lbr` must fail saying what was probed; `-e auto`
// must take the first of branch stacks, AMD BRS, cycles and cpu-clock that perf can open too,
// and say which (on a machine without a PMU: the fallback to IP sampling on cpu-clock).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class BranchEventCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_executable("perf")) GTEST_SKIP() << "perf is not installed";
  }
  // Whether `perf record ARGS -- true` opens its event here.
  bool perf_opens(const std::vector<std::string>& event_args) {
    std::vector<std::string> argv = {
        "perf", "record", "-q", "-N", "-B", "-o", (dir_ / "perf.data").string()};
    argv.insert(argv.end(), event_args.begin(), event_args.end());
    argv.insert(argv.end(), {"--", "true"});
    return run_command(argv).exit_code == 0;
  }
  // The event perf record ends up sampling for ARGS (it falls back from cycles to cpu-clock).
  std::string perf_event_taken(const std::vector<std::string>& event_args) {
    if (!perf_opens(event_args)) return "";
    return run_command({"perf", "evlist", "-i", (dir_ / "perf.data").string()}).out;
  }
  CommandResult profcollect(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {profcollect_exe().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
  }
  TempDir dir_;
};

TEST_F(BranchEventCli, LbrFailsWithWhatWasProbedWhereThereIsNoBranchStack) {
  const CommandResult r = profcollect({"-e", "lbr", "-o", (dir_ / "out").string(), "--", "true"});
  if (perf_opens({"-e", "cycles:u", "-j", "any,u"})) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "branch stacks (-e lbr)")) << r.err;
    return;
  }
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "profcollect: error: -e lbr:")) << r.err;
  // What was looked at is named: the cpuinfo flags and the sysfs PMU directory.
  EXPECT_TRUE(contains(r.err, "/proc/cpuinfo")) << r.err;
  EXPECT_TRUE(contains(r.err, "/sys/bus/event_source/devices")) << r.err;
}

TEST_F(BranchEventCli, BrsWithFrequencyIsRefusedSayingWhy) {
  const CommandResult r =
      profcollect({"-e", "brs", "-F", "999", "-o", (dir_ / "out").string(), "--", "true"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "fixed period only")) << r.err;
  EXPECT_TRUE(contains(r.err, "frequency mode")) << r.err;
}

TEST_F(BranchEventCli, AutoTakesTheFirstEnginePerfCanOpenAndSaysSo) {
  const CommandResult r = profcollect({"-e", "auto", "-o", (dir_ / "out").string(), "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string period = "100003";
  if (perf_opens({"-e", "cycles:u", "-j", "any,u"})) {
    EXPECT_TRUE(contains(r.err, "sampling cycles with branch stacks")) << r.err;
  } else if (perf_opens({"-e", "r0c4:u", "-c", period, "-j", "any,u"})) {
    EXPECT_TRUE(contains(r.err, "AMD BRS found")) << r.err;
  } else if (contains(perf_event_taken({"-e", "cycles:u"}), "cycles")) {
    EXPECT_TRUE(contains(r.err, "sampling cycles (IP samples, no branch stacks)")) << r.err;
  } else {
    // No PMU (a virtual machine): perf itself fell back to cpu-clock.
    EXPECT_TRUE(contains(r.err, "no branch-stack hardware; ")) << r.err;
    EXPECT_TRUE(contains(r.err, "falling back to IP sampling on cpu-clock")) << r.err;
  }
}

// Raw events in perf's words: where perf opens the same request, profcollect must collect; where
// perf cannot (no PMU here), profcollect must fail at the open and name the event.
TEST_F(BranchEventCli, RawEventWithABranchStackFollowsWhatPerfCanOpen) {
  for (const std::vector<std::string>& words :
       {std::vector<std::string>{"-e", "r20c4:u", "-b", "-c", "100003"},
        std::vector<std::string>{"-e", "r0c4", "-c", "100003", "-j", "any,u"}}) {
    std::string joined;
    for (const auto& w : words) joined += " " + w;
    SCOPED_TRACE(joined);
    std::vector<std::string> args = words;
    args.insert(args.end(), {"-o", (dir_ / "out").string(), "--", "true"});
    const CommandResult r = profcollect(args);
    if (perf_opens(words)) {
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_TRUE(contains(r.err, "sampling raw event")) << r.err;
      continue;
    }
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "profcollect: error: the event " + words[1].substr(0, 5))) << r.err;
    EXPECT_TRUE(contains(r.err, "is not supported on this machine")) << r.err;
  }
}

TEST_F(BranchEventCli, RawEventSyntaxErrorsAreUsageErrors) {
  struct Bad {
    std::vector<std::string> words;
    std::string says;
  };
  for (const Bad& b : {Bad{{"-e", "r20c4:h"}, "modifier 'h' is not taken"},
                       Bad{{"-e", "r0x20c4"}, "1 to 16 hex digits"},
                       Bad{{"-e", "r0c4", "-j", "any,cond"}, "-j takes any[,u][,k]"},
                       Bad{{"-e", "cpu-clock", "-b"}, "-b / -j ask for a branch stack"}}) {
    std::vector<std::string> args = b.words;
    args.insert(args.end(), {"-o", (dir_ / "out").string(), "--", "true"});
    const CommandResult r = profcollect(args);
    EXPECT_EQ(r.exit_code, 2) << b.words[1] << ": " << r.err;
    EXPECT_TRUE(contains(r.err, b.says)) << r.err;
  }
  // -b and -j are one request, given once.
  const CommandResult r =
      profcollect({"-e", "r0c4", "-b", "-j", "any", "-o", (dir_ / "out").string(), "--", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace
}  // namespace profcollect::test
