// The unit's sandbox, tried under a real systemd (a Debian 12 container, systemd_container.h):
// `systemd-run -p <every sandbox directive of the installed unit> profcollect -a` must collect
// samples there, which shows that its capabilities and its system-call filter let
// perf_event_open, /proc/PID/maps and the binaries of other users' processes through. The
// workload is a copy of dash that another user runs from a directory only that user may read,
// deleted once started: profiling it takes every capability of the unit, and taking any one
// away loses it, so the set is also the smallest that works.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/integration/systemd_container.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr const char* kUnitPath = "/usr/lib/systemd/system/profcollect.service";
constexpr const char* kWorkload = "/home/spinner/spin";
constexpr const char* kOutputRoot = "/var/lib/profcollect";
// 0.1 s of CPU at the usual 100 ticks per second: hundreds of samples at the default 4000 Hz.
constexpr uint64_t kMinWorkloadTicks = 10;

// The unit's [Service] directives that make its sandbox: all but how the service is started,
// watched and restarted, which a one-off run does not take.
std::vector<std::string> sandbox_directives(const std::string& unit) {
  static const std::vector<std::string> kNotSandbox = {
      "Type", "ExecStart", "ExecReload", "WatchdogSec", "Restart", "RestartSec", "TimeoutStopSec"};
  std::vector<std::string> directives;
  bool service = false;
  for (const std::string& line : split_lines(unit)) {
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      service = line == "[Service]";
      continue;
    }
    const std::string key = line.substr(0, line.find('='));
    if (service && std::find(kNotSandbox.begin(), kNotSandbox.end(), key) == kNotSandbox.end())
      directives.push_back(line);
  }
  return directives;
}

// The directives with `capability` taken out of the unit's capability sets.
std::vector<std::string> without_capability(std::vector<std::string> directives,
                                            const std::string& capability) {
  for (std::string& d : directives) {
    if (!d.starts_with("CapabilityBoundingSet=") && !d.starts_with("AmbientCapabilities="))
      continue;
    const size_t equals = d.find('=');
    std::istringstream values(d.substr(equals + 1));
    std::string kept, value;
    while (values >> value)
      if (value != capability) kept += (kept.empty() ? "" : " ") + value;
    d = d.substr(0, equals + 1) + kept;
  }
  return directives;
}

// The build-id `readelf -n` prints for `binary` (lower-case hex); empty when none.
std::string readelf_build_id(const fs::path& binary) {
  const CommandResult notes = run_command({"readelf", "-n", binary.string()});
  const std::regex id(R"(Build ID: ([0-9a-f]+))");
  std::smatch match;
  return std::regex_search(notes.out, match, id) ? match[1].str() : "";
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

class SystemdSandboxTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (bookworm_tree().state != ContainerTreeState::ready) return;
    try {
      container_ = std::make_unique<SystemdContainer>(bookworm_tree().root);
      std::cout << "[container] Debian 12 tree ready in "
                << bookworm_tree().made_in.count() / 1000.0 << " s (made or completed in this run),"
                << " booted in " << container_->booted_in().count() / 1000.0 << " s\n";
      container_->install_build(binary_dir());
      start_workload();
    } catch (const std::exception& e) {
      setup_error_ = e.what();
    }
  }
  static void TearDownTestSuite() { container_.reset(); }

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(require_bookworm_tree());
    if (IsSkipped()) return;
    ASSERT_TRUE(container_ && setup_error_.empty()) << setup_error_;
  }

  // nobody runs a copy of dash that spins, from a directory only nobody may enter, and the copy
  // is deleted once it runs: the collector reaches it only through /proc/PID/map_files.
  static void start_workload() {
    const std::vector<std::string> prepare = {
        "sh", "-c",
        std::string("install -d -o nobody -g nogroup -m 0700 /home/spinner && cp /usr/bin/dash ") +
            kWorkload + " && chown nobody:nogroup " + kWorkload + " && chmod 0700 " + kWorkload +
            " && systemd-run --unit=spin -p User=nobody " + kWorkload +
            " -c 'while :; do :; done'"};
    check(container_->run(prepare), prepare);
    const std::vector<std::string> exe_of_spin = {
        "sh", "-c", "readlink /proc/$(systemctl show -p MainPID --value spin)/exe"};
    CommandResult exe;
    for (int attempt = 0; attempt < 100; ++attempt) {
      exe = container_->run(exe_of_spin);
      if (exe.out.starts_with(kWorkload)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!exe.out.starts_with(kWorkload))
      throw std::runtime_error("the workload did not start: " + exe.describe(exe_of_spin));
    const std::vector<std::string> main_pid = {"systemctl", "show",    "-p",
                                               "MainPID",   "--value", "spin"};
    const CommandResult pid = container_->run(main_pid);
    check(pid, main_pid);
    workload_pid_ = pid.out.substr(0, pid.out.find('\n'));
    const std::vector<std::string> remove = {"rm", kWorkload};
    check(container_->run(remove), remove);
    const CommandResult deleted = container_->run(exe_of_spin);
    if (deleted.out.find("(deleted)") == std::string::npos)
      throw std::runtime_error("the workload's binary is not deleted: " +
                               deleted.describe(exe_of_spin));
  }

  static void check(const CommandResult& result, const std::vector<std::string>& argv) {
    if (result.exit_code != 0)
      throw std::runtime_error("in the container: " + result.describe(argv));
  }

  // `systemd-run --wait --pipe -p D... profcollect -a --duration S -o /var/lib/profcollect/NAME`.
  // With `kernel`, `profcollect kernel --duration S -o ...` instead of -a.
  static CommandResult collect(const std::vector<std::string>& directives, const std::string& name,
                               const std::string& duration = "2", bool kernel = false,
                               const std::vector<std::string>& options = {}) {
    std::vector<std::string> argv = {"systemd-run", "--wait", "--pipe", "--collect", "--quiet"};
    for (const std::string& d : directives) argv.insert(argv.end(), {"-p", d});
    // A sanitized build's leak check stops the world with ptrace, which the unit's filter denies
    // (as it should): it is left to the tests on the host. Any other report still fails the run.
    if (PROFCOLLECT_SANITIZED)
      argv.insert(argv.end(), {"-p",
                               "Environment=ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 "
                               "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"});
    if (kernel) {
      argv.insert(argv.end(), {"/usr/bin/profcollect", "kernel", "--duration", duration, "-o",
                               std::string(kOutputRoot) + "/" + name});
    } else {
      argv.insert(argv.end(), {"/usr/bin/profcollect", "-a", "--duration", duration, "-o",
                               std::string(kOutputRoot) + "/" + name});
    }
    argv.insert(argv.end(), options.begin(), options.end());
    return container_->run(argv, seconds(300));
  }

  // CPU time the workload has used, in clock ticks (utime + stime of /proc/PID/stat): a run
  // that finds no profile of it is only a finding if it ran meanwhile.
  static uint64_t workload_cpu_ticks() {
    const std::string stat = container_->run({"cat", "/proc/" + workload_pid_ + "/stat"}).out;
    const size_t end = stat.rfind(')');
    if (end == std::string::npos) return 0;
    std::istringstream fields(stat.substr(end + 2));
    std::string field;
    uint64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 3.. after "pid (comm)"
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    return utime + stime;
  }

  static std::vector<std::string> unit_directives() {
    return sandbox_directives(read_file(container_->root() / fs::path(kUnitPath).relative_path()));
  }

  // The output directory NAME as the host sees it, and the workload's profile directory in it.
  static fs::path output(const std::string& name) {
    return container_->root() / fs::path(kOutputRoot).relative_path() / name;
  }
  static fs::path workload_profile(const std::string& name) {
    return output(name) / ("spin-" + readelf_build_id(container_->root() / "usr/bin/dash"));
  }

  static std::unique_ptr<SystemdContainer> container_;
  static std::string setup_error_;
  static std::string workload_pid_;  // in the container's PID namespace
};

std::unique_ptr<SystemdContainer> SystemdSandboxTest::container_;
std::string SystemdSandboxTest::setup_error_;
std::string SystemdSandboxTest::workload_pid_;

TEST_F(SystemdSandboxTest, UnitSandboxCollectsAnotherUsersDeletedBinary) {
  const std::vector<std::string> directives = unit_directives();
  ASSERT_FALSE(directives.empty());
  const CommandResult run = collect(directives, "sandboxed");
  ASSERT_EQ(run.exit_code, 0) << run.describe({"systemd-run", "profcollect -a"}) << "\n"
                              << container_->diagnostics();

  const nlohmann::json collection = read_json(output("sandboxed") / "collection.json");
  ASSERT_FALSE(collection.is_discarded()) << "no collection.json; profcollect said:\n" << run.err;
  EXPECT_GT(collection.value("samples", 0), 0) << collection.dump(1);

  // The deleted copy of dash is profiled under dash's build-id, as readelf reads it.
  const fs::path profile = workload_profile("sandboxed");
  ASSERT_TRUE(fs::is_directory(profile)) << profile << " is missing; profcollect said:\n"
                                         << run.err;
  const nlohmann::json meta = read_json(profile / "meta.json");
  ASSERT_FALSE(meta.is_discarded());
  EXPECT_GT(meta.value("samples", 0), 0) << meta.dump(1);
  EXPECT_EQ(meta.value("build_id", ""), readelf_build_id(container_->root() / "usr/bin/dash"));

  // What the service writes belongs to its user and is readable by no one else.
  const CommandResult uid = container_->run({"id", "-u", "profcollect"});
  ASSERT_EQ(uid.exit_code, 0) << uid.err;
  for (const fs::path& file :
       {profile / "meta.json", profile / "bolt.fdata", output("sandboxed") / "collection.json"}) {
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0) << file;
    EXPECT_EQ(std::to_string(st.st_uid) + "\n", uid.out) << file;
    EXPECT_EQ(st.st_mode & 077, 0u) << file << " mode " << std::oct << (st.st_mode & 07777);
  }
}

TEST_F(SystemdSandboxTest, InstalledUnitLoadsAndRatesAtMostTwoUnderTheRunningManager) {
  const std::vector<std::string> load_state = {"systemctl", "show",    "-p",
                                               "LoadState", "--value", "profcollect.service"};
  const CommandResult loaded = container_->run(load_state);
  EXPECT_EQ(loaded.out, "loaded\n") << loaded.describe(load_state) << container_->diagnostics();

  const std::vector<std::string> verify = {"systemd-analyze", "verify", kUnitPath};
  const CommandResult verified = container_->run(verify);
  EXPECT_EQ(verified.exit_code, 0) << verified.describe(verify);
  EXPECT_EQ(verified.out + verified.err, "") << verified.describe(verify);

  // The manager's own reading of the loaded unit, beside the offline one of SystemdUnitTest.
  const std::vector<std::string> security = {"systemd-analyze", "security", "--no-pager",
                                             "profcollect.service"};
  const CommandResult rated = container_->run(security);
  const std::regex overall(R"(Overall exposure level for profcollect\.service: ([0-9]+\.[0-9]+))");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(rated.out, match, overall)) << rated.describe(security);
  EXPECT_LE(std::strtod(match[1].str().c_str(), nullptr), 2.0) << rated.out;
  std::cout << "[container] exposure under the running manager: " << match[1].str() << "\n";
}

TEST_F(SystemdSandboxTest, EachCapabilityOfTheUnitIsNeeded) {
  const std::vector<std::string> directives = unit_directives();
  const auto ambient = std::find_if(directives.begin(), directives.end(), [](const std::string& d) {
    return d.starts_with("AmbientCapabilities=");
  });
  ASSERT_NE(ambient, directives.end());
  std::istringstream capabilities(ambient->substr(ambient->find('=') + 1));
  std::string capability;
  int tried = 0;
  while (capabilities >> capability) {
    ++tried;
    const std::string name = "without-" + capability;
    if (capability == "CAP_SYSLOG") {
      // Only kernel profiles need it: the kernel shows its addresses to CAP_SYSLOG alone (at
      // perf_event_paranoid 2, this machine's and the kernel's default).
      const CommandResult run =
          collect(without_capability(directives, capability), name, "1", true);
      EXPECT_NE(run.exit_code, 0) << "a kernel profile without CAP_SYSLOG:\n" << run.err;
      EXPECT_NE(run.err.find(capability), std::string::npos) << capability << ":\n" << run.err;
      continue;
    }
    const uint64_t cpu_before = workload_cpu_ticks();
    const CommandResult run = collect(without_capability(directives, capability), name, "1");
    const uint64_t cpu_after = workload_cpu_ticks();
    // Without CAP_PERFMON system-wide sampling is refused at paranoid > 0 (the default 2);
    // without any other, the workload's binary cannot be read and gets no profile.
    if (run.exit_code != 0) {
      EXPECT_NE(run.err.find(capability), std::string::npos) << capability << ":\n" << run.err;
      continue;
    }
    EXPECT_FALSE(fs::exists(workload_profile(name)))
        << "the workload was profiled without " << capability << "; profcollect said:\n"
        << run.err;
    // A workload that did not run would leave no profile with any capability set.
    EXPECT_GE(cpu_after - cpu_before, kMinWorkloadTicks)
        << "inconclusive without " << capability
        << ": the workload hardly ran during the collection";
  }
  EXPECT_GE(tried, 1);
}

TEST_F(SystemdSandboxTest, AKernelProfileWorksUnderTheUnitsSandbox) {
  const CommandResult run = collect(unit_directives(), "kernel", "1", true);
  ASSERT_EQ(run.exit_code, 0) << run.describe({"systemd-run", "profcollect kernel"}) << "\n"
                              << container_->diagnostics();
  // No vmlinux in the container: the unsymbolized profile and the functions from kallsyms.
  bool found = false;
  for (const auto& e : fs::directory_iterator(output("kernel"))) {
    if (!e.path().filename().string().starts_with("kernel.kallsyms-")) continue;
    found = true;
    EXPECT_GT(fs::file_size(e.path() / "functions.txt"), 0u) << e.path();
    EXPECT_GT(fs::file_size(e.path() / "autofdo.unsym"), 0u) << e.path();
  }
  EXPECT_TRUE(found) << "no kernel.kallsyms-* directory; profcollect said:\n" << run.err;
}

// The BPF engine under the unit: the unit grants no CAP_BPF and its filter no bpf(), so `auto`
// takes the perf engine and says why; with the drop-in docs/usage.md's "The BPF engine" gives
// (systemd/profcollect-bpf.conf), `bpf` collects.
TEST_F(SystemdSandboxTest, TheBpfEngineFallsBackUnderTheUnitAndRunsWithItsDropIn) {
  const std::vector<std::string> unit = unit_directives();
  const CommandResult fallback = collect(unit, "engine-auto", "1", false, {"--engine", "auto"});
  ASSERT_EQ(fallback.exit_code, 0)
      << fallback.describe({"systemd-run", "profcollect -a --engine auto"}) << "\n"
      << container_->diagnostics();
  EXPECT_NE(fallback.err.find("engine auto: perf"), std::string::npos) << fallback.err;
  EXPECT_EQ(read_json(output("engine-auto") / "collection.json").value("engine", ""), "perf");

  // A drop-in's capability sets add to the unit's (systemd merges repeated assignments in unit
  // files; a repeated -p of systemd-run replaces), its system-call filter entries come after.
  std::vector<std::string> with_drop_in = unit;
  int merged = 0;
  for (const std::string& line :
       split_lines(read_file(source_dir() / "systemd/profcollect-bpf.conf"))) {
    if (line.empty() || line[0] == '#' || line[0] == '[') continue;
    const std::string key = line.substr(0, line.find('=') + 1);
    auto same = std::find_if(with_drop_in.begin(), with_drop_in.end(), [&](const std::string& d) {
      return d.starts_with(key) &&
             (key == "CapabilityBoundingSet=" || key == "AmbientCapabilities=");
    });
    if (same != with_drop_in.end()) {
      *same += " " + line.substr(key.size());
    } else {
      with_drop_in.push_back(line);
    }
    ++merged;
  }
  ASSERT_EQ(merged, 3) << "the drop-in's lines";
  const uint64_t cpu_before = workload_cpu_ticks();
  const CommandResult bpf = collect(with_drop_in, "engine-bpf", "2", false, {"--engine", "bpf"});
  const uint64_t cpu_after = workload_cpu_ticks();
  ASSERT_EQ(bpf.exit_code, 0) << bpf.describe({"systemd-run", "profcollect -a --engine bpf"})
                              << "\n"
                              << container_->diagnostics();
  const nlohmann::json collection = read_json(output("engine-bpf") / "collection.json");
  ASSERT_FALSE(collection.is_discarded()) << bpf.err;
  EXPECT_EQ(collection.value("engine", ""), "bpf");
  EXPECT_GT(collection.value("samples", 0), 0) << collection.dump(1);
  ASSERT_GE(cpu_after - cpu_before, kMinWorkloadTicks) << "inconclusive: the workload hardly ran";
  EXPECT_TRUE(fs::is_directory(workload_profile("engine-bpf"))) << "the workload has no profile:\n"
                                                                << bpf.err;
}

TEST_F(SystemdSandboxTest, SystemCallFilterWithoutPerfEventOpenRefusesTheCollection) {
  // The judge that the filter is applied at all: the unit's allow list without perf_event_open.
  std::vector<std::string> directives = unit_directives();
  bool changed = false;
  for (std::string& d : directives) {
    const size_t at = d.find(" perf_event_open");
    if (d.starts_with("SystemCallFilter=") && at != std::string::npos) {
      d.erase(at, std::string(" perf_event_open").size());
      changed = true;
    }
  }
  ASSERT_TRUE(changed) << "the unit's SystemCallFilter= does not allow perf_event_open";
  const CommandResult run = collect(directives, "no-perf-event-open", "1");
  EXPECT_NE(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("perf_event_open"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace profcollect::test
