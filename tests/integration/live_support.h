// What the live-collection tests (live_*_test.cpp) share: the fixture programs
// (tests/fixtures/make_live_fixtures.sh, generated once into <build>/fixtures/live/), profcollect
// running in the background while a test acts on it, and strict readers of what a collection
// writes (DIR/collection.json, DIR/<binary>-<id>/{bolt.fdata,meta.json}) that share no code with
// profcollect's own writers and readers.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {

// Generates the live fixtures if missing or older than the script or their sources (under a
// file lock, like the convert fixtures), and remembers the outcome.
const FixtureStatus& live_fixtures();

// Base of the live tests: skips where the fixtures cannot be made (no compiler, perf cannot
// sample), fails when the script fails.
class LiveFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // A fixture program or library, canonical (as the kernel names it in MMAP2 records).
  static std::filesystem::path fixture(const std::string& name);
};

// Who a background process runs as (setresuid/setresgid before the exec); root when empty.
struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
};

// A process running while the test acts on it; stdout and stderr go to files in a private
// directory. Killed (with its process group when it has its own) and reaped on destruction.
class BackgroundProcess {
 public:
  struct Options {
    std::filesystem::path cwd;
    bool own_process_group = false;  // setpgid(0, 0): a terminal's Ctrl-C goes to the group
    std::optional<RunAs> run_as;
  };
  static BackgroundProcess start(const std::vector<std::string>& argv, const Options& options);
  static BackgroundProcess start(const std::vector<std::string>& argv) { return start(argv, {}); }

  BackgroundProcess(BackgroundProcess&& other) noexcept;
  BackgroundProcess& operator=(BackgroundProcess&&) = delete;
  ~BackgroundProcess();

  pid_t pid() const { return pid_; }
  // Its exit code (128 + signal when a signal ended it) once it has ended within `timeout`;
  // nullopt while it still runs.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  bool running() { return !wait(std::chrono::milliseconds(0)).has_value(); }
  void signal(int sig) const;
  void signal_group(int sig) const;  // needs own_process_group
  std::string out() const;
  std::string err() const;
  std::string describe() const;  // command line, exit, stdout and stderr, for messages

 private:
  BackgroundProcess() = default;
  pid_t pid_ = -1;
  bool own_group_ = false;
  std::optional<int> exit_code_;
  std::vector<std::string> argv_;
  std::filesystem::path log_dir_;
};

// A fixture program started in the background, returned once it runs `exe` (its exec done), so
// that /proc/PID/exe names it when a collector attaches. Fails the test when it does not.
BackgroundProcess start_target(const std::filesystem::path& exe,
                               const std::vector<std::string>& args);

// `profcollect ARGS...` started in the background.
BackgroundProcess start_profcollect(const std::vector<std::string>& args,
                                    const BackgroundProcess::Options& options = {});

// Waits until `predicate` holds, checking every 10 ms; false when `timeout` passes first.
bool wait_until(const std::function<bool()>& predicate, std::chrono::milliseconds timeout);

// Whether process `pid` holds a perf_event file descriptor (a profiler has attached).
bool has_perf_event_fd(pid_t pid);

// A bolt.fdata read strictly: the "no_lbr <event>:..." header first, then only
// "1 <name> <hex offset> <decimal count>" lines, and a final newline (a file cut short is not
// complete). `error` says what is wrong; counts are as in convert_judges' NoLbrFdata.
struct StrictFdata {
  std::string error;  // empty when valid
  std::vector<std::string> events;
  NamedSiteCounts counts;
  bool valid() const { return error.empty(); }
  uint64_t total() const;
  std::map<std::string, uint64_t> per_function() const;
};
StrictFdata read_fdata_strictly(const std::filesystem::path& path);

// A JSON file parsed; discarded (is_discarded()) when missing or not JSON.
nlohmann::json read_json_file(const std::filesystem::path& path);

// The profile directories under `out` whose names start with "<basename>-" (sorted).
std::vector<std::filesystem::path> profile_dirs(const std::filesystem::path& out,
                                                const std::string& basename);

// perf record -e cpu-clock -F `frequency` ARGS... into `data`, for judges. `record_args` come
// after the options: "--", a command, or "-p", a pid.
CommandResult perf_record(const std::filesystem::path& data,
                          const std::vector<std::string>& record_args, unsigned frequency = 4000);

// perf script's samples per function symbol for the samples whose dso is `binary` (canonical
// path), and how many samples of `binary` there were; `pid_filter` 0 for all.
struct PerfFunctionShares {
  uint64_t total = 0;      // every sample in the recording
  uint64_t kernel = 0;     // of them in the kernel ([kernel.kallsyms] or a kernel address)
  uint64_t in_binary = 0;  // samples perf places in the binary
  std::map<std::string, uint64_t> per_function;  // in the binary, by perf's symbol ("" unknown)
};
std::optional<PerfFunctionShares> perf_function_shares(const std::filesystem::path& data,
                                                       const std::filesystem::path& binary,
                                                       std::string& error);

// The build-id `readelf -n` prints for `binary` (lower-case hex); empty when it has none or
// readelf fails.
std::string readelf_build_id(const std::filesystem::path& binary);

// Share of `part` in `whole`, in percentage points.
inline double points(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// "name: a vs b" lines for two per-function share tables (percentage points), for messages.
std::string share_table(const std::map<std::string, uint64_t>& ours, uint64_t our_total,
                        const std::map<std::string, uint64_t>& theirs, uint64_t their_total);

// The unprivileged user the permission tests run profcollect as, and the sysctl they set.
inline constexpr const char* kTestUser = "profcollect-test";
inline constexpr const char* kParanoid = "/proc/sys/kernel/perf_event_paranoid";

// The unprivileged test user, created (as a system user without home) when missing; nullopt
// and `error` set when it cannot be.
std::optional<RunAs> test_user(std::string& error);

// Makes `dir` (a test's private directory) traversable by others, makes `dir`/user owned by
// `user`, and returns the options that run a background process as `user` in it. Throws
// std::runtime_error when the directory cannot be given to the user.
BackgroundProcess::Options run_in_own_directory(const RunAs& user,
                                                const std::filesystem::path& dir);

// Sets a numeric sysctl file (kernel.perf_event_paranoid, kernel.bpf_stats_enabled) for the
// lifetime of the object, then puts back what it was.
class SysctlSetting {
 public:
  SysctlSetting(std::filesystem::path file, int value);
  ~SysctlSetting();
  SysctlSetting(const SysctlSetting&) = delete;
  SysctlSetting& operator=(const SysctlSetting&) = delete;
  bool ok() const { return ok_; }

 private:
  std::filesystem::path file_;
  int saved_ = 0;
  bool ok_ = false;
};

// kernel.perf_event_paranoid set for the lifetime of the object.
class ParanoidSetting : public SysctlSetting {
 public:
  explicit ParanoidSetting(int value) : SysctlSetting(kParanoid, value) {}
};

// Sends `command` ("enable", ...) through perf record's --control FIFOs `ctl` and `ack` and
// waits for perf's "ack"; false when perf does not open them or answer within kPatience.
bool perf_control(const std::filesystem::path& ctl, const std::filesystem::path& ack,
                  const std::string& command);

}  // namespace profcollect::test
