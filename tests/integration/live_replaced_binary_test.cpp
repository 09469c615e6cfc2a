// A binary deleted and replaced by another file while its process runs: profcollect must profile
// the file that is mapped (read through /proc/PID/map_files), under the build-id the running
// process has, never the new file at the same path. Judged by readelf's build-ids and nm's
// symbol of `work` in the original binary.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/integration/cpu_time.h"
#include "tests/integration/live_support.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

std::string build_id_of(const std::filesystem::path& bin) {
  auto r = run_command({"readelf", "-n", bin.string()});
  auto pos = r.out.find("Build ID: ");
  if (pos == std::string::npos) return "";
  auto end = r.out.find('\n', pos);
  return r.out.substr(pos + 10, end - pos - 10);
}

TEST(LiveReplacedBinary, ProfilesTheMappedFileNotTheNewOneAtItsPath) {
  if (!have_executable("gcc")) GTEST_SKIP() << "gcc is not installed";
  TempDir dir;
  auto src = source_dir() / "tests/fixtures/src/hot.c";
  auto bin = dir / "hot";
  ASSERT_EQ(run_command({"gcc", "-O2", "-g", "-o", bin.string(), src.string()}).exit_code, 0);
  std::string original_id = build_id_of(bin);
  ASSERT_FALSE(original_id.empty());

  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl(bin.c_str(), bin.c_str(), "100000", static_cast<char*>(nullptr));
    _exit(127);
  }
  // The exec must be done before the file is replaced (a loaded machine may take long to get
  // there), or the child would run the new file.
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  const bool started = wait_until(
      [&] {
        std::error_code ec;
        return std::filesystem::read_symlink(link, ec) == std::filesystem::canonical(bin);
      },
      kPatience);
  if (!started) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  ASSERT_TRUE(started) << bin << " did not start";
  // Replace the file: another program (built -O0, so another build-id) at the same path.
  std::filesystem::remove(bin);
  ASSERT_EQ(run_command({"gcc", "-O0", "-o", bin.string(), src.string()}).exit_code, 0);
  std::string new_id = build_id_of(bin);
  ASSERT_NE(new_id, original_id);

  // Collected while the program runs 200 ms of its CPU time (800 periods at 4000 Hz, nearly all
  // in work), then SIGTERM: the final flush writes them.
  auto out = dir / "out";
  BackgroundProcess collector =
      start_profcollect({"-o", out.string(), "--pid", std::to_string(pid)});
  const bool collecting = wait_until(
      [&] { return collector.err().find("collecting") != std::string::npos; }, kPatience);
  const bool ran = collecting && wait_for_cpu_time(pid, std::chrono::milliseconds(200), kPatience);
  collector.signal(SIGTERM);
  const std::optional<int> status = collector.wait(kPatience);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(collecting) << collector.describe();
  ASSERT_TRUE(ran) << "the program did not run 200 ms of CPU time";
  ASSERT_TRUE(status) << collector.describe();
  ASSERT_EQ(*status, 0) << collector.describe();
  auto profile_dir = out / ("hot-" + original_id);
  ASSERT_TRUE(std::filesystem::exists(profile_dir / "bolt.fdata"))
      << "expected a profile under the running binary's build-id; got: " << collector.describe();
  EXPECT_FALSE(std::filesystem::exists(out / ("hot-" + new_id)));
  std::string fdata = read_file(profile_dir / "bolt.fdata");
  EXPECT_NE(fdata.find("\n1 work "), std::string::npos) << fdata;
}

}  // namespace
}  // namespace profcollect::test
