// `profcollect doctor` on this machine, each finding judged by a tool or file that knows the
// fact independently: sysctl for the sysctls, `perf stat -e cycles` for the PMU, `bpftool
// feature probe` for BPF perf_event programs, /proc/kallsyms read by the same user for kernel
// addresses, `strip --version` for binutils. Run twice: as root, and as nobody without
// capabilities (setpriv), where the same judges must agree with what doctor says is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

struct Doctor {
  CommandResult run;
  nlohmann::json report;
  nlohmann::json check(const std::string& id) const {
    for (const auto& c : report["checks"])
      if (c["id"] == id) return c;
    ADD_FAILURE() << "no check " << id << " in " << report.dump(2);
    return nlohmann::json::object({{"status", ""}, {"detail", ""}});
  }
};

// doctor --json, run through `prefix` (empty, or setpriv as nobody).
Doctor run_doctor(const std::vector<std::string>& prefix) {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {profcollect_exe().string(), "doctor", "--json"});
  Doctor d;
  d.run = run_command(argv);
  EXPECT_EQ(d.run.exit_code, 0) << d.run.describe(argv);
  d.report = nlohmann::json::parse(d.run.out, nullptr, false);
  EXPECT_FALSE(d.report.is_discarded()) << d.run.out;
  return d;
}

std::string first_line(const std::vector<std::string>& argv) {
  const CommandResult r = run_command(argv);
  const std::vector<std::string> lines = split_lines(r.out);
  return lines.empty() ? "" : lines.front();
}

const std::vector<std::string> kAsNobody = {"setpriv",
                                            "--reuid=65534",
                                            "--regid=65534",
                                            "--clear-groups",
                                            "--inh-caps=-all",
                                            "--bounding-set=-all",
                                            "--"};

// Whether `perf stat` counts hardware cycles here ("<not supported>" without a PMU).
bool perf_counts_cycles() {
  const CommandResult r = run_command({"perf", "stat", "-x,", "-e", "cycles", "--", "true"});
  return r.exit_code == 0 && r.err.find("<not supported>") == std::string::npos &&
         r.err.find("<not counted>") == std::string::npos;
}

// A text symbol's address as `prefix` sees it in /proc/kallsyms, non-zero when shown.
bool kallsyms_shows_addresses(const std::vector<std::string>& prefix) {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {"head", "-n", "1", "/proc/kallsyms"});
  const std::string line = first_line(argv);
  return !line.empty() &&
         line.substr(0, line.find(' ')).find_first_not_of('0') != std::string::npos;
}

class DoctorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"perf", "bpftool", "sysctl", "setpriv", "strip"})
      if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (to compare with an unprivileged run)";
  }
};

TEST_F(DoctorTest, AsRootEveryFindingAgreesWithItsJudge) {
  const Doctor d = run_doctor({});
  const std::string paranoid = first_line({"sysctl", "-n", "kernel.perf_event_paranoid"});
  EXPECT_NE(d.check("perf_event_paranoid")["detail"].get<std::string>().find(
                "kernel.perf_event_paranoid = " + paranoid),
            std::string::npos)
      << d.check("perf_event_paranoid");
  EXPECT_EQ(d.check("perf_event_paranoid")["status"], "ok");  // root holds CAP_PERFMON

  EXPECT_EQ(d.check("pmu")["status"], perf_counts_cycles() ? "ok" : "limited") << d.check("pmu");
  // Branch stacks: perf itself records one (any taken branch, on the CPU's own cycles event), or
  // the hardware is missing.
  TempDir tmp;
  const CommandResult branch =
      run_command({"perf", "record", "-q", "-N", "-B", "-b", "-e", "cycles", "-o",
                   (tmp / "b.data").string(), "--", "true"});
  EXPECT_EQ(d.check("branch_stack")["status"], branch.exit_code == 0 ? "ok" : "missing")
      << d.check("branch_stack") << "\nperf: " << branch.err;
  // Every finding that is neither ok nor information says how to fix it.
  for (const auto& c : d.report["checks"]) {
    if (c["status"] == "ok" || c["status"] == "info") continue;
    EXPECT_TRUE(c.contains("fix") && !c["fix"].get<std::string>().empty()) << c;
  }

  const CommandResult probe = run_command({"bpftool", "feature", "probe", "kernel"});
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  const bool bpf = probe.out.find("eBPF program_type perf_event is available") != std::string::npos;
  EXPECT_EQ(d.check("bpf")["status"], bpf ? "ok" : "missing") << d.check("bpf");

  EXPECT_EQ(d.check("btf")["status"], access("/sys/kernel/btf/vmlinux", F_OK) == 0 ? "ok" : "info");
  EXPECT_EQ(d.check("kptr_restrict")["status"], kallsyms_shows_addresses({}) ? "ok" : "limited")
      << d.check("kptr_restrict");
  EXPECT_EQ(d.check("capabilities")["status"], "ok") << d.check("capabilities");

  const std::string strip = first_line({"strip", "--version"});
  const std::string version = strip.substr(strip.rfind(' ') + 1);
  EXPECT_NE(d.check("toolchain")["detail"].get<std::string>().find("binutils " + version),
            std::string::npos)
      << d.check("toolchain") << " vs " << strip;

  const std::string mlock = first_line({"sysctl", "-n", "kernel.perf_event_mlock_kb"});
  EXPECT_NE(d.check("mlock_budget")["detail"].get<std::string>().find("unlimited"),
            std::string::npos)
      << "root holds CAP_IPC_LOCK: " << d.check("mlock_budget");

  // The vmlinux: where none of the usual places holds a file, missing, naming them.
  const std::string release = first_line({"uname", "-r"});
  const std::vector<std::string> places = {"/usr/lib/debug/boot/vmlinux-" + release,
                                           "/lib/modules/" + release + "/build/vmlinux",
                                           "/boot/vmlinux-" + release};
  bool any = false;
  for (const std::string& p : places) any = any || access(p.c_str(), F_OK) == 0;
  if (!any) {
    const nlohmann::json v = d.check("vmlinux");
    EXPECT_EQ(v["status"], "missing") << v;
    for (const std::string& p : places)
      EXPECT_NE(v["detail"].get<std::string>().find(p), std::string::npos) << v;
  }

  if (access("/proc/modules", F_OK) != 0) {
    EXPECT_EQ(d.check("module_debug_info")["status"], "info");
  } else {
    const CommandResult wc = run_command({"sh", "-c", "wc -l < /proc/modules"});
    EXPECT_NE(d.check("module_debug_info")["detail"].get<std::string>().find(
                  split_lines(wc.out).at(0) + " modules loaded"),
              std::string::npos)
        << d.check("module_debug_info");
  }
}

TEST_F(DoctorTest, AsNobodyWithoutCapabilitiesWhatIsMissingIsSaidWithItsFix) {
  const Doctor d = run_doctor(kAsNobody);
  const nlohmann::json caps = d.check("capabilities");
  EXPECT_NE(caps["detail"].get<std::string>().find("uid 65534 has none"), std::string::npos)
      << caps;

  const int paranoid = std::stoi(first_line({"sysctl", "-n", "kernel.perf_event_paranoid"}));
  const nlohmann::json p = d.check("perf_event_paranoid");
  EXPECT_EQ(p["status"], paranoid <= 0 ? "ok" : (paranoid >= 3 ? "missing" : "limited")) << p;
  if (paranoid > 0) {
    EXPECT_NE(p["fix"].get<std::string>().find("CAP_PERFMON"), std::string::npos) << p;
  }

  const bool shown = kallsyms_shows_addresses(kAsNobody);
  const nlohmann::json k = d.check("kptr_restrict");
  EXPECT_EQ(k["status"], shown ? "ok" : "limited") << k;
  if (!shown) {
    EXPECT_NE(k["fix"].get<std::string>().find("CAP_SYSLOG"), std::string::npos) << k;
  }

  // Loading a BPF program needs CAP_BPF (or CAP_SYS_ADMIN): bpftool as nobody is refused too.
  std::vector<std::string> argv = kAsNobody;
  argv.insert(argv.end(), {"bpftool", "feature", "probe", "kernel", "unprivileged"});
  const CommandResult probe = run_command(argv);
  const bool bpf = probe.out.find("eBPF program_type perf_event is available") != std::string::npos;
  const nlohmann::json b = d.check("bpf");
  EXPECT_EQ(b["status"], bpf ? "ok" : "missing") << b << "\nbpftool: " << probe.out.substr(0, 2000);
  if (!bpf) {
    EXPECT_NE(b["fix"].get<std::string>().find("CAP_BPF"), std::string::npos) << b;
  }
}

TEST_F(DoctorTest, TheTextReportHasALinePerCheckAndAFixUnderEachProblem) {
  const Doctor json = run_doctor(kAsNobody);
  std::vector<std::string> argv = kAsNobody;
  argv.insert(argv.end(), {profcollect_exe().string(), "doctor"});
  const CommandResult text = run_command(argv);
  ASSERT_EQ(text.exit_code, 0) << text.describe(argv);
  const std::vector<std::string> lines = split_lines(text.out);
  for (const auto& c : json.report["checks"]) {
    const std::string id = c["id"], status = c["status"];
    bool found = false;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].rfind(status, 0) != 0 || lines[i].find(" " + id + " ") == std::string::npos)
        continue;
      found = true;
      if (c.contains("fix")) {
        ASSERT_LT(i + 1, lines.size());
        EXPECT_NE(lines[i + 1].find("fix: " + c["fix"].get<std::string>()), std::string::npos)
            << lines[i + 1];
      }
    }
    EXPECT_TRUE(found) << id << " (" << status << ") not in:\n" << text.out;
  }
}

}  // namespace
}  // namespace profcollect::test
