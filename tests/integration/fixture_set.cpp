#include "tests/integration/fixture_set.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

constexpr int kToolsMissingStatus = 77;  // the scripts' "cannot build or record here" exit status

fs::path fixtures_source_dir() { return source_dir() / "tests" / "fixtures"; }

// Whether `input` exists and is not newer than `stamp_time`.
bool not_newer(const fs::path& input, fs::file_time_type stamp_time) {
  std::error_code error;
  const auto input_time = fs::last_write_time(input, error);
  return !error && input_time <= stamp_time;
}

// Holds an exclusive flock on a file for its lifetime.
class FileLock {
 public:
  explicit FileLock(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ < 0) return;
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace

const FixtureStatus& FixtureSet::status() {
  std::call_once(once_, [this] { status_ = generate(); });
  return status_;
}

void FixtureSet::require_ready() {
  const FixtureStatus& made = status();
  if (made.state == FixtureState::tools_missing)
    GTEST_SKIP() << spec_.name << " fixtures cannot be made here: " << made.message;
  ASSERT_EQ(made.state, FixtureState::ready) << spec_.script << " failed: " << made.message;
}

// The stamp is written last by the script; the set is stale when the script, the shell helper
// every script sources, a program source or another input is newer than it.
bool FixtureSet::up_to_date(const fs::path& dir) const {
  std::error_code error;
  const auto stamp_time = fs::last_write_time(dir / (spec_.name + ".stamp"), error);
  if (error) return false;
  std::vector<fs::path> inputs = spec_.other_inputs;
  inputs.push_back(fixtures_source_dir() / spec_.script);
  inputs.push_back(fixtures_source_dir() / "fixture_lib.sh");
  if (!spec_.source_folder.empty()) {
    for (const auto& entry : fs::directory_iterator(fixtures_source_dir() / spec_.source_folder)) {
      if (!spec_.is_source || spec_.is_source(entry.path().filename().string()))
        inputs.push_back(entry.path());
    }
  }
  for (const auto& input : inputs)
    if (!not_newer(input, stamp_time)) return false;
  return true;
}

FixtureStatus FixtureSet::generate() const {
  FixtureStatus status;
  status.dir = binary_dir() / "fixtures" / spec_.name;
  fs::create_directories(status.dir);

  // Another test process may be generating right now: wait for it, then look again.
  const FileLock lock(status.dir / ".lock");
  if (!lock.held()) {
    status.message = "cannot lock " + (status.dir / ".lock").string();
    return status;
  }
  if (up_to_date(status.dir)) {
    status.state = FixtureState::ready;
    return status;
  }
  std::vector<std::string> argv = {"sh", (fixtures_source_dir() / spec_.script).string(),
                                   status.dir.string()};
  argv.insert(argv.end(), spec_.arguments.begin(), spec_.arguments.end());
  const CommandResult run = run_command(argv, {.cwd = status.dir, .timeout = spec_.timeout});
  if (run.exit_code == 0) {
    status.state = FixtureState::ready;
  } else {
    status.state =
        run.exit_code == kToolsMissingStatus ? FixtureState::tools_missing : FixtureState::failed;
    status.message = run.describe(argv);
  }
  return status;
}

namespace {
std::vector<FixtureSet& (*)()>& fixture_set_registry() {
  static std::vector<FixtureSet& (*)()> registry;
  return registry;
}
}  // namespace

bool register_fixture_set(FixtureSet& (*accessor)()) {
  fixture_set_registry().push_back(accessor);
  return true;
}

const std::vector<FixtureSet& (*)()>& registered_fixture_sets() { return fixture_set_registry(); }

}  // namespace profcollect::test
