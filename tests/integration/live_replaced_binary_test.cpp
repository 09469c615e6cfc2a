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
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Replace the file: another program (built -O0, so another build-id) at the same path.
  std::filesystem::remove(bin);
  ASSERT_EQ(run_command({"gcc", "-O0", "-o", bin.string(), src.string()}).exit_code, 0);
  std::string new_id = build_id_of(bin);
  ASSERT_NE(new_id, original_id);

  auto out = dir / "out";
  auto r = run_command({profcollect_exe().string(), "-q", "-o", out.string(), "--duration", "1",
                        "--pid", std::to_string(pid)});
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  auto profile_dir = out / ("hot-" + original_id);
  ASSERT_TRUE(std::filesystem::exists(profile_dir / "bolt.fdata"))
      << "expected a profile under the running binary's build-id; got: " << r.err;
  EXPECT_FALSE(std::filesystem::exists(out / ("hot-" + new_id)));
  std::string fdata = read_file(profile_dir / "bolt.fdata");
  EXPECT_NE(fdata.find("\n1 work "), std::string::npos) << fdata;
}

}  // namespace
}  // namespace profcollect::test
