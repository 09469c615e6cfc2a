// The daemon's `kernel` key: a kernel profile kept beside the collection of user binaries,
// written at every flush into output_dir and added to across restarts. On a machine without a
// vmlinux it is the kallsyms route's directory, kernel.kallsyms-<running build-id>, named by the
// build-id `perf buildid-list -k` reads from the running kernel. Its content is judged against
// the running kernel's own symbol table: every kernel-image line of functions.txt holds exactly
// the samples.ip offsets that fall between its symbol's address and the next text symbol's in
// /proc/kallsyms (types t, T, w, W: the text symbols perf takes from it). A restart only adds;
// a damaged profile is set aside, said, and started again.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"
#include "tests/integration/syscall_load.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

struct KernelText {
  uint64_t text = 0, etext = 0;
  std::map<std::string, std::vector<uint64_t>>
      addresses_of;                 // name -> its addresses (local names repeat)
  std::vector<uint64_t> addresses;  // distinct text symbol addresses, sorted
};

KernelText read_kernel_text() {
  KernelText k;
  std::ifstream in("/proc/kallsyms");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string address, type, name, module;
    if (!(fields >> address >> type >> name)) continue;
    const uint64_t a = std::stoull(address, nullptr, 16);
    if (name == "_text") k.text = a;
    if (name == "_etext") k.etext = a;
    if (fields >> module) continue;  // a module's symbol: not the kernel image
    if (type != "t" && type != "T" && type != "w" && type != "W") continue;
    k.addresses_of[name].push_back(a);
    k.addresses.push_back(a);
  }
  std::sort(k.addresses.begin(), k.addresses.end());
  k.addresses.erase(std::unique(k.addresses.begin(), k.addresses.end()), k.addresses.end());
  return k;
}

std::map<uint64_t, uint64_t> read_offsets(const fs::path& file) {
  std::map<uint64_t, uint64_t> out;
  std::istringstream in(read_file(file));
  std::string offset;
  uint64_t count;
  while (in >> offset >> count) out[std::stoull(offset, nullptr, 16)] += count;
  return out;
}

class DaemonKernelKeyTest : public LiveFixtureTest {
 protected:
  void SetUp() override {
    LiveFixtureTest::SetUp();
    if (IsSkipped()) return;
    if (::geteuid() != 0) GTEST_SKIP() << "system-wide kernel samples need root (or CAP_PERFMON)";
    if (!have_executable("perf"))
      GTEST_SKIP() << "perf is not installed (the judge of the running kernel's build-id)";
    if (!have_executable("gcc")) GTEST_SKIP() << "gcc is not installed";
    std::string error;
    load_ = build_syscall_load(tmp_.path(), error);
    ASSERT_FALSE(load_.empty()) << error;
    write_config(true);
  }

  void write_config(bool kernel) {
    write_text(config(), "output_dir = \"" + out().string() + "\"\n" + "socket = \"" +
                             socket().string() + "\"\n" + "event = \"cpu-clock\"\n" +
                             "flush_interval = \"1h\"\n" +
                             "kernel = " + (kernel ? "true" : "false") + "\n" + "binaries = [" +
                             exact_path_pattern(fixture("live_spin")) + "]\n");
  }

  // One daemon run: started, the syscall load run until its kernel profile holds `samples`,
  // flushed, stopped by SIGTERM. The flush's status reply.
  json run_daemon(uint64_t samples) {
    NotifyListener notify(tmp_ / ("notify-" + std::to_string(++runs_)));
    BackgroundProcess daemon = start_daemon(config(), notify);
    EXPECT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
    json status;
    {
      SyscallLoad running(load_, 600, 2 * std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
      const auto deadline = std::chrono::steady_clock::now() + kPatience;
      do {
        std::this_thread::sleep_for(200ms);
        status = run_ctl(socket(), {"status"}).reply;
      } while (status["kernel"].value("samples", uint64_t{0}) < samples &&
               std::chrono::steady_clock::now() < deadline);
    }
    EXPECT_GE(status["kernel"].value("samples", uint64_t{0}), samples)
        << status.dump() << daemon.describe();
    const CtlRun flush = run_ctl(socket(), {"flush"});
    EXPECT_EQ(flush.exit_code, 0) << flush.describe() << daemon.describe();
    daemon.signal(SIGTERM);
    const std::optional<int> code = daemon.wait(kPatience);
    EXPECT_EQ(code, std::optional<int>(0)) << daemon.describe();
    log_ = daemon.err();
    return status;
  }

  fs::path socket() const { return tmp_ / "run" / "ctl"; }
  fs::path out() const { return tmp_ / "out"; }
  fs::path config() const { return tmp_ / "profcollect.toml"; }

  TempDir tmp_;
  fs::path load_;
  std::string log_;
  int runs_ = 0;
};

TEST_F(DaemonKernelKeyTest,
       TheKernelProfileMatchesKallsymsAddsUpAcrossRestartsAndADamagedOneIsSetAside) {
  const CommandResult id = run_command({"perf", "buildid-list", "-k"});
  ASSERT_EQ(id.exit_code, 0) << id.describe({"perf", "buildid-list", "-k"});
  const std::string build_id = split_lines(id.out).at(0);
  const fs::path dir = out() / ("kernel.kallsyms-" + build_id);

  // First run.
  const json status = run_daemon(2000);
  ASSERT_FALSE(HasFailure()) << log_;
  ASSERT_TRUE(status.contains("kernel")) << status.dump();
  EXPECT_EQ(status["kernel"].value("directory", ""), dir.filename().string()) << status.dump();
  ASSERT_TRUE(fs::is_directory(dir)) << "no vmlinux here: the kallsyms route\n" << log_;
  const json meta1 = json::parse(read_file(dir / "meta.json"));
  const std::map<uint64_t, uint64_t> offsets1 = read_offsets(dir / "samples.ip");
  uint64_t image1 = 0;
  for (const auto& [o, c] : offsets1) image1 += c;
  EXPECT_EQ(meta1["samples"].get<uint64_t>(), image1);
  EXPECT_GE(meta1["kernel_samples"].get<uint64_t>(), 2000u);
  EXPECT_GT(meta1["first_sample_ns"].get<uint64_t>(), 0u);
  EXPECT_TRUE(json::parse(read_file(out() / "kernel.json")).value("cumulative", false));
  // collection.json is still the user binaries' collection's.
  EXPECT_EQ(json::parse(read_file(out() / "collection.json")).value("event", ""), "cpu-clock");

  // functions.txt against the running kernel's own symbols.
  const KernelText k = read_kernel_text();
  ASSERT_TRUE(k.text && k.etext > k.text);
  // Names repeat (static functions of different files): counts are compared per name, over
  // the ranges of every symbol of that name.
  std::map<std::string, uint64_t> per_name;
  uint64_t listed = 0;
  std::istringstream functions(read_file(dir / "functions.txt"));
  std::string share, name, module;
  uint64_t count;
  while (functions >> count >> share >> name >> module) {
    if (module != "kernel") continue;
    listed += count;
    per_name[name] += count;
  }
  for (const auto& [function, samples] : per_name) {
    const auto a = k.addresses_of.find(function);
    ASSERT_NE(a, k.addresses_of.end()) << function << " is not a text symbol of /proc/kallsyms";
    uint64_t in_ranges = 0;
    for (uint64_t start : a->second) {
      const auto next = std::upper_bound(k.addresses.begin(), k.addresses.end(), start);
      const uint64_t end = next == k.addresses.end() ? k.etext : std::min(*next, k.etext);
      for (auto it = offsets1.lower_bound(start - k.text);
           it != offsets1.end() && it->first < end - k.text; ++it) {
        in_ranges += it->second;
      }
    }
    EXPECT_EQ(samples, in_ranges) << function;
  }
  EXPECT_GE(per_name.size(), 3u);
  EXPECT_EQ(listed, image1) << "every kernel-image sample is in a function of the image";

  // A restart adds to what is there: every count only grows, by this run's samples.
  run_daemon(1000);
  ASSERT_FALSE(HasFailure()) << log_;
  const json meta2 = json::parse(read_file(dir / "meta.json"));
  const json kernel2 = json::parse(read_file(out() / "kernel.json"));
  const std::map<uint64_t, uint64_t> offsets2 = read_offsets(dir / "samples.ip");
  for (const auto& [o, c] : offsets1) {
    ASSERT_TRUE(offsets2.contains(o)) << std::hex << o;
    EXPECT_GE(offsets2.at(o), c) << std::hex << o;
  }
  EXPECT_EQ(meta2["kernel_samples"].get<uint64_t>(),
            meta1["kernel_samples"].get<uint64_t>() + kernel2["kernel_samples"].get<uint64_t>());
  EXPECT_GE(kernel2["kernel_samples"].get<uint64_t>(), 1000u);
  EXPECT_EQ(meta2["first_sample_ns"], meta1["first_sample_ns"]);
  EXPECT_GT(meta2["last_sample_ns"].get<uint64_t>(), meta1["last_sample_ns"].get<uint64_t>());

  // A damaged profile: set aside (kept), said, and the profile starts again.
  write_text(dir / "samples.ip", "not a count\n");
  run_daemon(500);
  ASSERT_FALSE(HasFailure()) << log_;
  EXPECT_NE(log_.find("cannot be read"), std::string::npos) << log_;
  size_t set_aside = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(".unreadable-") != std::string::npos) ++set_aside;
  }
  EXPECT_EQ(set_aside, 4u) << "autofdo.unsym, functions.txt, samples.ip and meta.json kept aside";
  const json meta3 = json::parse(read_file(dir / "meta.json"));
  const json kernel3 = json::parse(read_file(out() / "kernel.json"));
  EXPECT_EQ(meta3["kernel_samples"], kernel3["kernel_samples"])
      << "started again from this run alone";
}

TEST_F(DaemonKernelKeyTest, AReloadTurnsTheKernelProfileOnAndOffAndOffWritesIt) {
  write_config(false);
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config(), notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
  const json before = run_ctl(socket(), {"status"}).reply;
  EXPECT_FALSE(before.contains("kernel")) << before.dump();

  write_config(true);
  const CtlRun on = run_ctl(socket(), {"reload"});
  ASSERT_EQ(on.exit_code, 0) << on.describe() << daemon.describe();
  json status;
  {
    SyscallLoad running(load_, 600, 2);
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    do {
      std::this_thread::sleep_for(200ms);
      status = run_ctl(socket(), {"status"}).reply;
    } while (status["kernel"].value("samples", uint64_t{0}) < 500 &&
             std::chrono::steady_clock::now() < deadline);
  }
  EXPECT_GE(status["kernel"].value("samples", uint64_t{0}), 500u)
      << status.dump() << daemon.describe();

  write_config(false);
  const CtlRun off = run_ctl(socket(), {"reload"});
  ASSERT_EQ(off.exit_code, 0) << off.describe() << daemon.describe();
  const json after = run_ctl(socket(), {"status"}).reply;
  EXPECT_FALSE(after.contains("kernel")) << after.dump();
  // Turned off, the kernel profile was written with what it had.
  const json kernel = json::parse(read_file(out() / "kernel.json"));
  EXPECT_GE(kernel.value("kernel_samples", uint64_t{0}), 500u) << kernel.dump();
  EXPECT_TRUE(fs::is_directory(out() / kernel.value("profile_dir", std::string())))
      << kernel.dump();
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(kPatience), std::optional<int>(0)) << daemon.describe();
}

}  // namespace
}  // namespace profcollect::test
