// Acceptance of our AutoFDO profile by the LLVM 19 tools that consume it: llvm-profdata-19
// converts it to extbinary, and clang++-19 -fprofile-sample-use annotates the hot function with
// an entry count of at least 1 and its loop with branch weights. A profile that names no real
// function is the negative control: clang gives every function an entry count (-1) even then,
// but no count >= 1 and no branch weights.
#include <regex>

#include <gtest/gtest.h>

#include "mapper/autofdo_binary.h"
#include "output/autofdo_writer.h"
#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

struct HotFunctionAnnotations {
  bool defined = false;
  long long entry_count = 0;         // 0 when there is none
  bool loop_branch_weights = false;  // a loop latch branch with !prof branch_weights
};

// What clang's IR says about _Z3hoti.
HotFunctionAnnotations annotations_of_hot(const std::string& ir) {
  HotFunctionAnnotations result;
  std::map<std::string, std::string> metadata;  // "!12" -> its text
  const std::regex node("^(![0-9]+) = (.*)$");
  for (const std::string& line : split_lines(ir)) {
    std::smatch m;
    if (std::regex_match(line, m, node)) metadata[m[1]] = m[2];
  }
  bool inside = false;
  for (const std::string& line : split_lines(ir)) {
    if (line.starts_with("define ") && line.find("@_Z3hoti(") != std::string::npos) {
      inside = true;
      result.defined = true;
      std::smatch m;
      if (std::regex_search(line, m, std::regex("!prof (![0-9]+)"))) {
        std::smatch count;
        const std::string& text = metadata[m[1]];
        if (std::regex_search(text, count, std::regex("function_entry_count\", i64 (-?[0-9]+)"))) {
          result.entry_count = std::stoll(count[1]);
        }
      }
      continue;
    }
    if (!inside) continue;
    if (line == "}") break;
    std::smatch m;
    if (line.find(" br ") != std::string::npos && line.find("!llvm.loop") != std::string::npos &&
        std::regex_search(line, m, std::regex("!prof (![0-9]+)")) &&
        metadata[m[1]].find("branch_weights") != std::string::npos) {
      result.loop_branch_weights = true;
    }
  }
  return result;
}

class AutofdoClangAcceptsTest : public AutofdoFixtureTest {
 protected:
  void SetUp() override {
    AutofdoFixtureTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!have_executable("clang++-19")) GTEST_SKIP() << "clang++-19 is not installed";
  }

  std::string our_profile() {
    AutofdoBinaryOptions options;
    options.debug_dirs.clear();
    std::unique_ptr<AutofdoBinary> binary =
        AutofdoBinary::open(ElfBinary::open(fixture("hot_dwarf5").string()), options);
    return write_autofdo_from_ips(
        read_ip_profile(fixture("hot_dwarf5.data"), fixture("hot_dwarf5")), *binary);
  }

  // clang++-19 on the fixture's source with the profile, as IR.
  std::string compile_with(const std::string& profile) {
    const fs::path file = dir_ / ("profile." + std::to_string(++compiles_) + ".prof");
    write_file(file, profile);
    const std::vector<std::string> argv = {
        "clang++-19",
        "-O2",
        "-gline-tables-only",
        "-fdebug-info-for-profiling",
        "-fprofile-sample-use=" + file.string(),
        "-S",
        "-emit-llvm",
        "-o",
        "-",
        (source_dir() / "tests" / "fixtures" / "autofdo_src" / "hot_main.cpp").string()};
    const CommandResult run = run_command(argv);
    EXPECT_EQ(run.exit_code, 0) << run.describe(argv);
    return run.out;
  }

  TempDir dir_;
  int compiles_ = 0;
};

TEST_F(AutofdoClangAcceptsTest, LlvmProfdataConvertsItToExtbinary) {
  const fs::path text = dir_ / "ours.prof", binary = dir_ / "ours.extbinary";
  write_file(text, our_profile());
  const std::vector<std::string> argv = {"llvm-profdata-19", "merge", "--sample",     "--extbinary",
                                         text.string(),      "-o",    binary.string()};
  const CommandResult run = run_command(argv);
  ASSERT_EQ(run.exit_code, 0) << run.describe(argv);
  const std::vector<std::string> show = {"llvm-profdata-19", "show", "--sample", binary.string()};
  const CommandResult shown = run_command(show);
  ASSERT_EQ(shown.exit_code, 0) << shown.describe(show);
  EXPECT_NE(shown.out.find("_Z3hoti"), std::string::npos) << shown.out;
}

TEST_F(AutofdoClangAcceptsTest, ClangAnnotatesTheHotFunctionAndItsLoop) {
  const HotFunctionAnnotations hot = annotations_of_hot(compile_with(our_profile()));
  ASSERT_TRUE(hot.defined);
  EXPECT_GE(hot.entry_count, 1);
  EXPECT_TRUE(hot.loop_branch_weights);
}

TEST_F(AutofdoClangAcceptsTest, AProfileOfNoRealFunctionAnnotatesNothing) {
  const HotFunctionAnnotations hot =
      annotations_of_hot(compile_with("no_such_function:5000:10\n 1: 5000\n"));
  ASSERT_TRUE(hot.defined);
  EXPECT_LT(hot.entry_count, 1);
  EXPECT_FALSE(hot.loop_branch_weights);
}

}  // namespace
}  // namespace profcollect::test
