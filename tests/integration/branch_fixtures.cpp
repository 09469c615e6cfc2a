#include "tests/integration/branch_fixtures.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <mutex>

#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

constexpr int kToolsMissingStatus = 77;  // the script's "cannot record here" exit status

fs::path script_path() { return source_dir() / "tests" / "fixtures" / "make_branch_fixtures.sh"; }
fs::path recorder_path() { return PROFCOLLECT_BRANCH_RECORDER; }

// The stamp is written last by the script; the set is stale when the script, the recorder or a
// branch_* program source is newer than it.
bool fixtures_up_to_date(const fs::path& dir) {
  std::error_code error;
  const auto stamp_time = fs::last_write_time(dir / "branch.stamp", error);
  if (error) return false;
  if (fs::last_write_time(script_path()) > stamp_time) return false;
  if (fs::last_write_time(recorder_path(), error) > stamp_time || error) return false;
  for (const auto& entry : fs::directory_iterator(source_dir() / "tests" / "fixtures" / "src"))
    if (entry.path().filename().string().starts_with("branch_") && entry.last_write_time() > stamp_time)
      return false;
  return true;
}

FixtureStatus generate() {
  FixtureStatus status;
  status.dir = binary_dir() / "fixtures" / "branch";
  fs::create_directories(status.dir);

  // Another test process may be generating right now: wait for it, then look again.
  const int lock = ::open((status.dir / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0 || ::flock(lock, LOCK_EX) != 0) {
    status.message = "cannot lock " + (status.dir / ".lock").string();
    if (lock >= 0) ::close(lock);
    return status;
  }
  if (fixtures_up_to_date(status.dir)) {
    status.state = FixtureState::ready;
  } else {
    const std::vector<std::string> argv = {"sh", script_path().string(), status.dir.string(),
                                           recorder_path().string()};
    const CommandResult run =
        run_command(argv, {.cwd = status.dir, .timeout = std::chrono::seconds(600)});
    if (run.exit_code == 0) {
      status.state = FixtureState::ready;
    } else {
      status.state =
          run.exit_code == kToolsMissingStatus ? FixtureState::tools_missing : FixtureState::failed;
      status.message = run.describe(argv);
    }
  }
  ::flock(lock, LOCK_UN);
  ::close(lock);
  return status;
}

}  // namespace

const FixtureStatus& branch_fixtures() {
  static std::once_flag once;
  static FixtureStatus status;
  std::call_once(once, [] { status = generate(); });
  return status;
}

void BranchFixtureTest::SetUp() {
  const FixtureStatus& status = branch_fixtures();
  if (status.state == FixtureState::tools_missing)
    GTEST_SKIP() << "branch fixtures cannot be made here: " << status.message;
  ASSERT_EQ(status.state, FixtureState::ready) << "make_branch_fixtures.sh failed: " << status.message;
}

std::filesystem::path BranchFixtureTest::fixture(const std::string& name) {
  // Canonical, so paths compare equal to the ones recorded in MMAP2 events.
  return fs::weakly_canonical(branch_fixtures().dir / name);
}

}  // namespace profcollect::test
