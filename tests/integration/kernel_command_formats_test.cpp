// `profcollect kernel --format`: on a machine without a vmlinux of the running kernel (this one),
// the formats that need it (bolt, autofdo) are named as not written, the kallsyms route's files
// are written as they are without --format, and a format that does not exist is a usage error
// before anything is collected.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

class KernelCommandFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "system-wide kernel samples need root (or CAP_PERFMON)";
  }
  CommandResult kernel(const std::string& formats, const fs::path& out) {
    argv_ = {profcollect_exe().string(),
             "kernel",
             "--duration",
             "0.5",
             "--format",
             formats,
             "-o",
             out.string()};
    return run_command(argv_);
  }
  // The files of the one kernel profile directory under `out`.
  static std::set<std::string> profile_files(const fs::path& out) {
    std::set<std::string> files;
    const nlohmann::json kernel =
        nlohmann::json::parse(read_file(out / "kernel.json"), nullptr, false);
    if (!kernel.is_object() || !kernel.contains("profile_dir")) return files;
    for (const auto& e : fs::directory_iterator(kernel["profile_dir"].get<std::string>()))
      files.insert(e.path().filename().string());
    return files;
  }
  TempDir dir_;
  std::vector<std::string> argv_;
};

TEST_F(KernelCommandFormats, WithoutAVmlinuxTheFormatsThatNeedItAreNamedAsNotWritten) {
  const CommandResult r = kernel("bolt,unsymbolized", dir_ / "out");
  ASSERT_EQ(r.exit_code, 0) << r.describe(argv_);
  const nlohmann::json kernel = nlohmann::json::parse(read_file(dir_ / "out/kernel.json"));
  if (kernel["symbolized"].get<bool>())
    GTEST_SKIP() << "this machine has a vmlinux of its running kernel";
  EXPECT_NE(r.err.find("--format bolt needs a vmlinux of the running kernel: not written"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("--format unsymbolized"), std::string::npos) << r.err;
  EXPECT_EQ(profile_files(dir_ / "out"),
            (std::set<std::string>{"autofdo.unsym", "functions.txt", "meta.json", "samples.ip"}));

  // Without --format: the same files, and no warning.
  const std::vector<std::string> plain = {
      profcollect_exe().string(), "kernel", "--duration", "0.5", "-o", (dir_ / "plain").string()};
  const CommandResult p = run_command(plain);
  ASSERT_EQ(p.exit_code, 0) << p.describe(plain);
  EXPECT_EQ(p.err.find("not written"), std::string::npos) << p.err;
  EXPECT_EQ(profile_files(dir_ / "plain"), profile_files(dir_ / "out"));
}

TEST_F(KernelCommandFormats, AnUnknownFormatIsAUsageErrorAndNothingIsCollected) {
  const CommandResult r = kernel("autofdo,perfdata", dir_ / "out");
  EXPECT_EQ(r.exit_code, 2) << r.describe(argv_);
  EXPECT_NE(r.err.find("--format: 'perfdata' is not one of bolt, autofdo, unsymbolized"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("collecting"), std::string::npos) << "refused before collecting: " << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out")) << r.err;
}

}  // namespace
}  // namespace profcollect::test
