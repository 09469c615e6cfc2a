// A kernel module's profiles (`convert BINARY=MODULE.ko`): a stand-in module built as the kernel's
// AutoFDO build builds modules (clang-19, DWARF 5, -fdebug-info-for-profiling, flow-sensitive
// discriminators, -mcmodel=kernel), compiled once and linked twice from the one object: as the
// .ko (ld -r: ET_REL, its DWARF relocated only by .rela.debug_*) and as a user-space twin
// (an executable whose .text holds the very same code). A sample is placed on every instruction
// of every function (objdump's), each with its own count, at the same code offset in both: in the
// module's memory (.text at its start, as perf assumes for a recording) and in the twin's text.
// Judges: llvm-profgen-19 --leading-ip-only's profile of the twin equals our module's AutoFDO
// profile after llvm-profdata-19 merge --sample --text (function names, line offsets,
// discriminators); the BOLT fdata's functions and offsets are nm's on the .ko (section-relative
// st_value), named as BOLT names globals and locals. A stripped module with its debug file found
// by build-id gives the same AutoFDO profile.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>

#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kModuleStart = 0xffffffffc0a40000, kModuleLength = 0x8000;

std::string hex(uint64_t v, bool prefix = true) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, prefix ? "0x%llx" : "%llx",
                static_cast<unsigned long long>(v));
  return buffer;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

struct NmFunction {
  std::string name;
  uint64_t addr = 0, size = 0;
  bool local = false;
};

class KernelModuleProfiles : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"clang-19", "ld", "nm", "objdump", "objcopy", "readelf",
                             "llvm-profgen-19", "llvm-profdata-19"}) {
      if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
    }
    run({"clang-19", "-O2", "-g", "-gdwarf-5", "-fdebug-info-for-profiling", "-mllvm",
         "-enable-fs-discriminator=true", "-fno-pic", "-mcmodel=kernel", "-ffreestanding",
         "-fno-builtin", "-fno-stack-protector", "-fcf-protection=none", "-mno-red-zone",
         "-fno-asynchronous-unwind-tables", "-c",
         (source_dir() / "tests/fixtures/kernel_src/autofdo_module.c").string(), "-o",
         (dir_ / "module.o").string()});
    run({"ld", "-r", "--build-id", "-o", ko().string(), (dir_ / "module.o").string()});
    // -mcmodel=kernel code needs its addresses to fit a sign-extended 32-bit field: 0x10000000 does.
    run({"ld", "-static", "--build-id", "-Ttext=0x10000000", "-e", "mod_init", "-o",
         twin().string(), (dir_ / "module.o").string()});
    if (HasFatalFailure()) return;
    read_nm();
    read_twin_layout();
    place_samples();
  }

  void run(const std::vector<std::string>& argv) {
    const CommandResult r = run_command(argv);
    ASSERT_EQ(r.exit_code, 0) << r.describe(argv);
  }

  fs::path ko() const { return dir_ / "autofdo-mod.ko"; }
  fs::path twin() const { return dir_ / "autofdo-mod-twin"; }

  // nm -S --defined-only on the .ko: every function in .text, section-relative.
  void read_nm() {
    const CommandResult r = run_command({"nm", "-S", "--defined-only", ko().string()});
    ASSERT_EQ(r.exit_code, 0);
    for (const std::string& line : split_lines(r.out)) {
      const std::vector<std::string> f = words(line);
      if (f.size() != 4 || (f[2] != "T" && f[2] != "t")) continue;
      functions_.push_back(
          {f[3], std::stoull(f[0], nullptr, 16), std::stoull(f[1], nullptr, 16), f[2] == "t"});
    }
    ASSERT_GE(functions_.size(), 4u);
  }

  // The twin's .text address (readelf -S) and its executable segment (readelf -l): where
  // llvm-profgen expects the twin's mapping.
  void read_twin_layout() {
    CommandResult r = run_command({"readelf", "-SW", twin().string()});
    for (const std::string& line : split_lines(r.out)) {
      const std::vector<std::string> f = words(line);
      for (size_t i = 0; i + 2 < f.size(); ++i) {
        if (f[i] == ".text" && f[i + 1] == "PROGBITS")
          twin_text_ = std::stoull(f[i + 2], nullptr, 16);
      }
    }
    r = run_command({"readelf", "-lW", twin().string()});
    for (const std::string& line : split_lines(r.out)) {
      const std::vector<std::string> f = words(line);
      if (f.size() >= 8 && f[0] == "LOAD" && line.find(" E ") != std::string::npos) {
        segment_offset_ = std::stoull(f[1], nullptr, 16);
        segment_vaddr_ = std::stoull(f[2], nullptr, 16);
        segment_size_ = std::stoull(f[5], nullptr, 16);
      }
    }
    ASSERT_NE(twin_text_, 0u);
    ASSERT_NE(segment_vaddr_, 0u);
  }

  // Every instruction objdump finds in the twin's .text inside an nm function, with a count of
  // its own: the offset into .text is the module's and the twin's.
  void place_samples() {
    const CommandResult r = run_command({"objdump", "-d", "-j", ".text", twin().string()});
    ASSERT_EQ(r.exit_code, 0);
    size_t n = 0;
    for (const std::string& line : split_lines(r.out)) {
      const size_t colon = line.find(":\t");
      if (colon == std::string::npos) continue;
      const uint64_t address = std::stoull(line.substr(0, colon), nullptr, 16);
      const uint64_t offset = address - twin_text_;
      for (const NmFunction& f : functions_) {
        if (offset >= f.addr && offset - f.addr < f.size) samples_[offset] = 1 + (n++ * 7) % 11;
      }
    }
    ASSERT_GT(samples_.size(), 50u);
  }

  // perf script text of the module's samples, as perf shows a module's mapping in pipe mode.
  std::string module_script() const {
    std::string out = "PERF_RECORD_MMAP -1/0: [" + hex(kModuleStart) + "(" + hex(kModuleLength) +
                      ") @ 0]: x [autofdo_mod]\n";
    for (const auto& [offset, count] : samples_) {
      for (uint64_t i = 0; i < count; ++i) out += "    " + hex(kModuleStart + offset, false) + "\n";
    }
    return out;
  }

  // The twin's samples as llvm-profgen reads IP samples (a dummy branch after each IP).
  std::string twin_script() const {
    const uint64_t page = 0xfff;
    std::string out = "PERF_RECORD_MMAP2 4242/4242: [" + hex(segment_vaddr_ & ~page) + "(" +
                      hex(segment_size_ + (segment_vaddr_ & page)) + ") @ " +
                      hex(segment_offset_ & ~page) + " 08:01 1234 0]: r-xp " + twin().string() +
                      "\n";
    for (const auto& [offset, count] : samples_) {
      for (uint64_t i = 0; i < count; ++i)
        out += "    " + hex(twin_text_ + offset, false) + " 0x0/0x0/P/-/-/0\n";
    }
    return out;
  }

  fs::path convert(const std::string& formats) {
    write_file(dir_ / "module.script", module_script());
    const fs::path out = dir_ / "out";
    const std::vector<std::string> argv = {profcollect_exe().string(),
                                           "convert",
                                           "-q",
                                           "--kernel",
                                           "--perf-script",
                                           (dir_ / "module.script").string(),
                                           "--format",
                                           formats,
                                           "-o",
                                           out.string(),
                                           ko().string()};
    const CommandResult r = run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
    return out;
  }

  TempDir dir_;
  std::vector<NmFunction> functions_;
  uint64_t twin_text_ = 0, segment_offset_ = 0, segment_vaddr_ = 0, segment_size_ = 0;
  std::map<uint64_t, uint64_t> samples_;  // offset into .text -> samples
};

TEST_F(KernelModuleProfiles, AutofdoProfileEqualsLlvmProfgensOfTheUserSpaceTwin) {
  const fs::path out = convert("autofdo,bolt,unsymbolized");
  ASSERT_FALSE(HasFailure());
  write_file(dir_ / "twin.script", twin_script());
  const std::string expected =
      normalize_profile(run_llvm_profgen({"--perfscript=" + (dir_ / "twin.script").string(),
                                          "--binary=" + twin().string(), "--leading-ip-only"},
                                         dir_.path()),
                        dir_.path());
  // Not a trivial comparison: the judge's profile holds the module's functions, with lines that
  // carry flow-sensitive discriminators (beyond the classic 6-bit base).
  for (const char* function : {"mod_ioctl:", "mod_init:", "mod_irq:"}) {
    ASSERT_NE(expected.find(function), std::string::npos) << expected;
  }
  bool wide = false;
  for (const std::string& line : split_lines(expected)) {
    const size_t dot = line.find('.'), colon = line.find(':');
    if (line.starts_with(" ") && dot != std::string::npos && colon != std::string::npos &&
        dot < colon && std::stoull(line.substr(dot + 1, colon - dot - 1)) >= 64)
      wide = true;
  }
  EXPECT_TRUE(wide) << "no flow-sensitive discriminator in the judge's profile:\n" << expected;
  EXPECT_EQ("", profile_difference(normalize_profile(read_file(out / "autofdo.prof"), dir_.path()),
                                   expected));
  EXPECT_TRUE(fs::exists(out / "autofdo.unsym"));
}

// A module stripped of its DWARF (objcopy --strip-debug) and its debug file (objcopy
// --only-keep-debug: its code sections NOBITS, its .rela.debug_* kept) found by build-id under
// --debug-dir: the debug file's DWARF is relocated against the same addresses.
TEST_F(KernelModuleProfiles, ASeparateDebugFileFoundByBuildIdGivesTheSameProfile) {
  const fs::path stripped = dir_ / "stripped" / "autofdo-mod.ko", debug = dir_ / "module.debug";
  fs::create_directories(stripped.parent_path());
  run({"objcopy", "--only-keep-debug", ko().string(), debug.string()});
  run({"objcopy", "--strip-debug", ko().string(), stripped.string()});
  const CommandResult notes = run_command({"readelf", "-n", ko().string()});
  const size_t at = notes.out.find("Build ID: ");
  ASSERT_NE(at, std::string::npos) << notes.out;
  const std::string id = notes.out.substr(at + 10, 40);
  const fs::path debug_dir = dir_ / "debug";
  fs::create_directories(debug_dir / ".build-id" / id.substr(0, 2));
  fs::copy_file(debug, debug_dir / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug"));

  write_file(dir_ / "module.script", module_script());
  write_file(dir_ / "twin.script", twin_script());
  const std::vector<std::string> argv = {profcollect_exe().string(),
                                         "convert",
                                         "-q",
                                         "--perf-script",
                                         (dir_ / "module.script").string(),
                                         "--debug-dir",
                                         debug_dir.string(),
                                         "--format",
                                         "autofdo",
                                         "-o",
                                         (dir_ / "stripped.prof").string(),
                                         stripped.string()};
  const CommandResult r = run_command(argv);
  ASSERT_EQ(r.exit_code, 0) << r.describe(argv);
  const std::string expected =
      normalize_profile(run_llvm_profgen({"--perfscript=" + (dir_ / "twin.script").string(),
                                          "--binary=" + twin().string(), "--leading-ip-only"},
                                         dir_.path()),
                        dir_.path());
  ASSERT_NE(expected.find("mod_ioctl:"), std::string::npos) << expected;
  EXPECT_EQ("", profile_difference(
                    normalize_profile(read_file(dir_ / "stripped.prof"), dir_.path()), expected));
}

TEST_F(KernelModuleProfiles, BoltFdataNamesNmsFunctionsAtTheirSectionRelativeOffsets) {
  const fs::path out = convert("bolt");
  ASSERT_FALSE(HasFailure());
  // BOLT's names: a global as it is, a local "name/N" (each local name here is defined once).
  std::map<std::string, uint64_t> expected;
  for (const auto& [offset, count] : samples_) {
    for (const NmFunction& f : functions_) {
      if (offset < f.addr || offset - f.addr >= f.size) continue;
      expected["1 " + f.name + (f.local ? "/1" : "") + " " + hex(offset - f.addr, false)] += count;
    }
  }
  std::map<std::string, uint64_t> ours;
  for (const std::string& line : split_lines(read_file(out))) {
    if (!line.starts_with("1 ")) continue;
    const size_t space = line.rfind(' ');
    ours[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  EXPECT_EQ(ours, expected);
  EXPECT_TRUE(expected.count("1 mod_scan/1 0")) << "the local function is sampled at its entry";
}

TEST_F(KernelModuleProfiles, AModuleWithoutCodeInTextIsRefusedForARecording) {
  // -ffunction-sections leaves .text empty: a recording gives no other section's place.
  const fs::path split = dir_ / "split-mod.ko";
  run({"clang-19", "-O2", "-g", "-ffunction-sections", "-fno-pic", "-mcmodel=kernel",
       "-ffreestanding", "-c",
       (source_dir() / "tests/fixtures/kernel_src/autofdo_module.c").string(), "-o",
       split.string()});
  write_file(dir_ / "module.script", module_script());
  const std::vector<std::string> argv = {profcollect_exe().string(),
                                         "convert",
                                         "-q",
                                         "--perf-script",
                                         (dir_ / "module.script").string(),
                                         "-o",
                                         (dir_ / "x.fdata").string(),
                                         split.string()};
  const CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 1) << r.describe(argv);
  EXPECT_NE(r.err.find("without code in .text"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.fdata"));
}

}  // namespace
}  // namespace profcollect::test
