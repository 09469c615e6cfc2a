// Kernel AutoFDO from a recording (`convert --kernel`): a stand-in vmlinux built as the kernel's
// AutoFDO build builds (clang-19, DWARF, flow-sensitive discriminators), linked at the kernel's
// address, and kernel samples of its code from real executions under a slid _text
// (tests/fixtures/make_kernel_fixtures.sh). Judged by llvm-profgen-19 --kernel on the same
// samples: IP samples through its --leading-ip-only recipe (perf script text with a dummy branch
// after each IP), branch samples from the perf.data directly; "equal" means identical
// `llvm-profdata-19 merge --sample --text` output. Each recording is converted as a perf.data and
// as the `perf script` text perf makes of it, and our unsymbolized profile, finished by
// llvm-profgen-19 --kernel --unsymbolized-profile, must give the same profile.
#include <gtest/gtest.h>

#include <sstream>

#include "mapper/autofdo_binary.h"
#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/fixture_set.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

FixtureSet& kernel_set() {
  static FixtureSet set(
      {.name = "kernel",
       .script = "make_kernel_fixtures.sh",
       .arguments = {PROFCOLLECT_BRANCH_RECORDER},
       .source_folder = "kernel_src",
       .is_source = [](std::string_view file) { return file.starts_with("kernel_autofdo"); },
       .other_inputs = {PROFCOLLECT_BRANCH_RECORDER}});
  return set;
}
[[maybe_unused]] const bool kernel_set_registered = register_fixture_set(&kernel_set);

constexpr uint64_t kSlide = 0x1e00000;  // the script's --kernel-slide

struct KernelCase {
  std::string name;
  std::string data;  // the recording
  bool branches;     // branch samples (else IP samples)
  bool perf_script;  // converted from `perf script` text (else from the perf.data)
};

void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.name; }

class KernelAutofdo : public ::testing::TestWithParam<KernelCase> {
 protected:
  void SetUp() override {
    for (const char* tool : {"llvm-profgen-19", "llvm-profdata-19", "perf", "nm"}) {
      if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
    }
    kernel_set().require_ready();
  }

  static fs::path fixture(const std::string& name) {
    return fs::weakly_canonical(kernel_set().status().dir / name);
  }

  // `perf script -F ip,brstack --show-mmap-events` of the recording: what llvm-profgen runs on a
  // perf.data, and what `convert --perf-script` reads.
  std::string perf_script_text(const fs::path& data) {
    const std::vector<std::string> argv = {
        "perf", "script", "-i", data.string(), "-F", "ip,brstack", "--show-mmap-events"};
    const CommandResult run = run_command(argv);
    EXPECT_EQ(run.exit_code, 0) << run.describe(argv);
    return run.out;
  }

  // llvm-profgen-19 --kernel's profile of the recording, normalized.
  std::string reference(const KernelCase& c) {
    const fs::path data = fixture(c.data), vmlinux = fixture("vmlinux");
    if (c.branches) {
      return normalize_profile(run_llvm_profgen({"--kernel", "--perfdata=" + data.string(),
                                                 "--binary=" + vmlinux.string()},
                                                dir_.path()),
                               dir_.path());
    }
    const fs::path script = dir_ / "ip.profgen.script";
    write_file(script, ip_perf_script(data));
    return normalize_profile(run_llvm_profgen({"--kernel", "--perfscript=" + script.string(),
                                               "--binary=" + vmlinux.string(), "--leading-ip-only"},
                                              dir_.path()),
                             dir_.path());
  }

  TempDir dir_;
};

TEST_P(KernelAutofdo, ProfileEqualsLlvmProfgenKernel) {
  const KernelCase& c = GetParam();
  const fs::path out = dir_ / "out";
  std::vector<std::string> argv = {profcollect_exe().string(), "convert", "-q", "--kernel"};
  if (c.perf_script) {
    const fs::path script = dir_ / "kernel.script";
    write_file(script, perf_script_text(fixture(c.data)));
    argv.insert(argv.end(), {"--perf-script", script.string()});
  } else {
    argv.insert(argv.end(), {"-p", fixture(c.data).string()});
  }
  argv.insert(argv.end(), {"--format", "autofdo,unsymbolized,bolt", "-o", out.string(),
                           fixture("vmlinux").string()});
  const CommandResult run = run_command(argv);
  ASSERT_EQ(run.exit_code, 0) << run.describe(argv);

  const std::string expected = reference(c);
  // Not a trivial comparison: the judge's profile holds the hot function, with samples.
  ASSERT_NE(expected.find("vfs_step:"), std::string::npos) << expected;
  EXPECT_EQ("", profile_difference(normalize_profile(read_file(out / "autofdo.prof"), dir_.path()),
                                   expected));

  // The unsymbolized profile, finished where the vmlinux is.
  std::vector<std::string> finish = {"--kernel",
                                     "--unsymbolized-profile=" + (out / "autofdo.unsym").string(),
                                     "--binary=" + fixture("vmlinux").string()};
  if (!c.branches) finish.push_back("--leading-ip-only");
  EXPECT_EQ(
      "", profile_difference(normalize_profile(run_llvm_profgen(finish, dir_.path()), dir_.path()),
                             expected));
  EXPECT_NE(read_file(out / "meta.json").find(c.branches ? "\"branch-ranges\"" : "\"ip-samples\""),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Recordings, KernelAutofdo,
    ::testing::Values(KernelCase{"IpSamplesPerfData", "kernel_ip.data", false, false},
                      KernelCase{"IpSamplesPerfScript", "kernel_ip.data", false, true},
                      KernelCase{"BranchSamplesPerfData", "kernel_branch.data", true, false},
                      KernelCase{"BranchSamplesPerfScript", "kernel_branch.data", true, true}),
    [](const auto& info) { return info.param.name; });

// What the comparisons above rely on, checked on the files themselves.
using KernelAutofdoClaims = KernelAutofdo;

TEST_F(KernelAutofdoClaims, TheVmlinuxHasFlowSensitiveDiscriminatorsAndTheSamplesASlidText) {
  const fs::path vmlinux = fixture("vmlinux");
  AutofdoBinaryOptions options;
  options.debug_dirs.clear();
  EXPECT_EQ(
      AutofdoBinary::open(ElfBinary::open(vmlinux.string()), options)->discriminator_encoding(),
      DiscriminatorEncoding::FlowSensitive);
  // llvm-profgen's profile keys some lines by a discriminator beyond the classic encoding's
  // 6-bit base (a flow-sensitive one).
  bool wide = false;
  for (const std::string& line : split_lines(reference({"", "kernel_ip.data", false, false}))) {
    const size_t dot = line.find('.'), colon = line.find(':');
    if (line.starts_with(" ") && dot != std::string::npos && colon != std::string::npos &&
        dot < colon && std::stoull(line.substr(dot + 1, colon - dot - 1)) >= 64)
      wide = true;
  }
  EXPECT_TRUE(wide) << "no flow-sensitive discriminator in the judge's profile";

  // perf's kernel mapping starts at nm's _text plus the slide, and is named as llvm-profgen
  // --kernel expects.
  const CommandResult nm = run_command({"nm", vmlinux.string()});
  uint64_t text = 0;
  for (const std::string& line : split_lines(nm.out)) {
    if (line.ends_with(" _text")) text = std::stoull(line.substr(0, line.find(' ')), nullptr, 16);
  }
  ASSERT_NE(text, 0u);
  for (const char* data : {"kernel_ip.data", "kernel_branch.data"}) {
    std::ostringstream expected;
    expected << "[0x" << std::hex << text + kSlide << "(";
    const std::string script = perf_script_text(fixture(data));
    const std::string first = script.substr(0, script.find('\n'));
    EXPECT_NE(first.find(expected.str()), std::string::npos) << data << ": " << first;
    EXPECT_NE(first.find("[kernel.kallsyms]_text"), std::string::npos) << data << ": " << first;
  }
}

TEST_F(KernelAutofdoClaims, KernelRefusesAUserProgram) {
  const std::vector<std::string> argv = {profcollect_exe().string(),
                                         "convert",
                                         "--kernel",
                                         "-p",
                                         fixture("kernel_ip.data").string(),
                                         "-o",
                                         (dir_ / "x.fdata").string(),
                                         fixture("vmlinux_twin").string()};
  const CommandResult run = run_command(argv);
  EXPECT_EQ(run.exit_code, 2) << run.describe(argv);
  EXPECT_NE(run.err.find("not a kernel image"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.fdata"));
}

// A vmlinux of another build (the same object linked with another build-id): refused, naming the
// build-id the recording lists for [kernel.kallsyms] (perf buildid-list) and the vmlinux's.
TEST_F(KernelAutofdoClaims, AVmlinuxOfAnotherBuildIsRefusedWithBothBuildIds) {
  const std::string other_id = "0123456789abcdef0123456789abcdef01234567";
  const fs::path other = dir_ / "vmlinux";
  const std::vector<std::string> ld = {
      "ld",
      "-static",
      "-T",
      (source_dir() / "tests/fixtures/kernel_src/kernel_autofdo.ld").string(),
      "--defsym",
      "IMAGE_BASE=0xffffffff81000000",
      "--build-id=0x" + other_id,
      "-o",
      other.string(),
      fixture("kernel_autofdo.o").string()};
  CommandResult run = run_command(ld);
  ASSERT_EQ(run.exit_code, 0) << run.describe(ld);
  const fs::path data = fixture("kernel_branch.data");
  run = run_command({"perf", "buildid-list", "-i", data.string()});
  const std::string listed = run.out.substr(0, run.out.find(' '));
  ASSERT_NE(run.out.find(" [kernel.kallsyms]"), std::string::npos) << run.out;
  const std::vector<std::string> argv = {profcollect_exe().string(),
                                         "convert",
                                         "--kernel",
                                         "-p",
                                         data.string(),
                                         "--format",
                                         "autofdo",
                                         "-o",
                                         (dir_ / "x.prof").string(),
                                         other.string()};
  run = run_command(argv);
  EXPECT_EQ(run.exit_code, 1) << run.describe(argv);
  EXPECT_NE(run.err.find(listed), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(other_id), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.prof"));
}

}  // namespace
}  // namespace profcollect::test
