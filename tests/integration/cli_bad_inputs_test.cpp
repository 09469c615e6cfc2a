// Inputs that are not what they claim get a clear message at once: a BINARY that is a FIFO
// (which used to hang convert and report), a --binary that does not exist, a BINARY built for
// another machine than the recording's, perf.data given as perf script text, a --pid that is a
// thread, and an output directory where no file can be created (found before the command runs).
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

class CliBadInputsTest : public ConvertFixtureTest {
 protected:
  TempDir tmp_;
  static CommandResult run(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {profcollect_exe().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions options;
    options.timeout = std::chrono::seconds(120);
    return run_command(argv, options);
  }
};

TEST_F(CliBadInputsTest, FifoBinaryIsRefusedWithoutHanging) {
  const auto fifo = tmp_ / "binary.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"convert", "-p", fixture("hot_gcc.data").string(), "-o", (tmp_ / "o.fdata").string(),
            fifo.string()},
           {"report", fixture("hot_gcc.data").string(), fifo.string()}}) {
    const CommandResult r = run(args);
    ASSERT_FALSE(r.timed_out) << "hung on a FIFO: " << command_line(args);
    EXPECT_EQ(r.exit_code, 1) << r.describe(args);
    EXPECT_NE(r.err.find(fifo.string() + ": not a regular file"), std::string::npos)
        << r.describe(args);
  }
  EXPECT_FALSE(fs::exists(tmp_ / "o.fdata"));
}

TEST_F(CliBadInputsTest, MissingOrSpecialBinaryOptionIsAnErrorBeforeCollecting) {
  const auto fifo = tmp_ / "lib.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto marker = tmp_ / "ran";
  for (const auto& [binary, reason] : std::vector<std::pair<std::string, std::string>>{
           {"/nonexistent/libfoo.so", std::strerror(ENOENT)},
           {fifo.string(), "not a regular file"}}) {
    const std::vector<std::string> args = {
        "-e",   "cpu-clock", "-o",    (tmp_ / "out").string(), "--binary",
        binary, "--",        "touch", marker.string()};
    const CommandResult r = run(args);
    EXPECT_EQ(r.exit_code, 1) << r.describe(args);
    EXPECT_NE(r.err.find("--binary"), std::string::npos) << r.describe(args);
    EXPECT_NE(r.err.find(binary), std::string::npos) << r.describe(args);
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.describe(args);
    EXPECT_FALSE(fs::exists(marker)) << "the command ran";
  }
}

TEST_F(CliBadInputsTest, BinaryThatIsNeverMappedIsSaidAtTheEnd) {
  // A real file no process of the command maps: collection works, and the end says so.
  const std::vector<std::string> args = {
      "-e", "cpu-clock", "-o", (tmp_ / "out").string(), "--binary", fixture("hot_gcc").string(),
      "--", "true"};
  const CommandResult r = run(args);
  EXPECT_EQ(r.exit_code, 0) << r.describe(args);
  EXPECT_NE(r.err.find("warning: --binary " + fixture("hot_gcc").string() + " was not mapped"),
            std::string::npos)
      << r.describe(args);
}

TEST_F(CliBadInputsTest, BinaryForAnotherMachineSaysBoth) {
  REQUIRE_TOOL("clang-19");
  // A static aarch64 executable, linked without any library (no cross sysroot needed).
  write_file(tmp_ / "start.c", "void _start(void) { for (;;) {} }\n");
  const auto arm = tmp_ / "arm_prog";
  const std::vector<std::string> cc = {
      "clang-19",   "--target=aarch64-linux-gnu", "-nostdlib", "-static", "-fuse-ld=lld", "-o",
      arm.string(), (tmp_ / "start.c").string()};
  const CommandResult built = run_command(cc);
  ASSERT_EQ(built.exit_code, 0) << built.describe(cc);
  const CommandResult readelf = run_command({"readelf", "-h", arm.string()});
  ASSERT_NE(readelf.out.find("AArch64"), std::string::npos)
      << readelf.out;  // the judge of the fixture
  const std::vector<std::string> args = {
      "convert",   "-p", fixture("hot_gcc.data").string(), "-o", (tmp_ / "o.fdata").string(),
      arm.string()};
  const CommandResult r = run(args);
  EXPECT_EQ(r.exit_code, 1) << r.describe(args);
  EXPECT_NE(r.err.find("aarch64"), std::string::npos) << r.describe(args);
  EXPECT_NE(r.err.find("x86_64"), std::string::npos) << r.describe(args);
  EXPECT_FALSE(fs::exists(tmp_ / "o.fdata"));
}

TEST_F(CliBadInputsTest, PerfDataGivenAsPerfScriptTextSaysToUseP) {
  const std::vector<std::string> args = {"convert",
                                         "--perf-script",
                                         fixture("hot_gcc.data").string(),
                                         "--format",
                                         "autofdo",
                                         "-o",
                                         (tmp_ / "o.prof").string(),
                                         fixture("hot_gcc").string()};
  const CommandResult r = run(args);
  EXPECT_EQ(r.exit_code, 2) << r.describe(args);
  EXPECT_NE(r.err.find("give it with -p"), std::string::npos) << r.describe(args);
}

TEST_F(CliBadInputsTest, ThreadIdProfilesItsProcessAndSaysSo) {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::thread t([&] {
    tid = ::gettid();
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  while (tid == 0) std::this_thread::yield();
  const std::vector<std::string> args = {
      "-e",         "cpu-clock", "-o", (tmp_ / "out").string(), "--pid", std::to_string(tid.load()),
      "--duration", "0.2"};
  const CommandResult r = run(args);
  done = true;
  t.join();
  EXPECT_EQ(r.exit_code, 0) << r.describe(args);
  const std::string said =
      std::to_string(tid.load()) + " is a thread of process " + std::to_string(::getpid());
  EXPECT_NE(r.err.find(said), std::string::npos) << r.describe(args);
}

TEST_F(CliBadInputsTest, OutputDirectoryWithoutRoomForFilesFailsBeforeTheCommandRuns) {
  // /proc exists and is a directory, but no file can be created in it, even by root.
  const auto marker = tmp_ / "ran";
  const std::vector<std::string> args = {"-e", "cpu-clock", "-o",           "/proc",
                                         "--", "touch",     marker.string()};
  const CommandResult r = run(args);
  EXPECT_EQ(r.exit_code, 1) << r.describe(args);
  EXPECT_NE(r.err.find("/proc: cannot create files in it"), std::string::npos) << r.describe(args);
  EXPECT_FALSE(fs::exists(marker)) << "the command ran before the output directory was checked";
}

}  // namespace
}  // namespace profcollect::test
