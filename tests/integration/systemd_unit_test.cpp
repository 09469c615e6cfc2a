// The systemd unit as `cmake --install` puts it in place, judged by systemd's own analyzer on the
// host (no running manager needed): `systemd-analyze verify` says nothing about it, and
// `systemd-analyze security --offline=yes` rates its exposure at most 2.0. The install goes into
// a temporary prefix, so the unit's ExecStart names a binary that exists there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>

#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

constexpr double kMaxExposure = 2.0;

class SystemdUnitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_executable("systemd-analyze")) GTEST_SKIP() << "systemd-analyze is not installed";
    if (!have_executable("cmake")) GTEST_SKIP() << "cmake is not installed";
  }

  // `cmake --install BUILD --prefix PREFIX`; the test fails when it does.
  static void install(const fs::path& prefix) {
    const std::vector<std::string> argv = {"cmake", "--install", binary_dir().string(), "--prefix",
                                           prefix.string()};
    const CommandResult run = run_command(argv);
    ASSERT_EQ(run.exit_code, 0) << run.describe(argv);
  }

  TempDir dir_;
  fs::path prefix() const { return dir_ / "usr"; }
  fs::path unit() const { return prefix() / "lib/systemd/system/profcollect.service"; }
};

TEST_F(SystemdUnitTest, InstallPutsTheBinaryTheUnitTheSystemUserAndTheConfigurationInPlace) {
  ASSERT_NO_FATAL_FAILURE(install(prefix()));
  for (const char* file :
       {"bin/profcollect", "lib/systemd/system/profcollect.service",
        "lib/sysusers.d/profcollect.conf", "share/doc/profcollect/profcollect.toml.example",
        "etc/profcollect/profcollect.toml"})
    EXPECT_TRUE(fs::is_regular_file(prefix() / file)) << file << " was not installed";

  // The unit names the binary and the configuration of this prefix.
  const std::string unit_text = read_file(unit());
  EXPECT_NE(unit_text.find("\nExecStart=" + (prefix() / "bin/profcollect").string() +
                           " daemon --config " +
                           (prefix() / "etc/profcollect/profcollect.toml").string() + "\n"),
            std::string::npos)
      << unit_text;

  // A second install keeps the configuration the administrator edited.
  const fs::path config = prefix() / "etc/profcollect/profcollect.toml";
  write_file(config, "# edited\n");
  ASSERT_NO_FATAL_FAILURE(install(prefix()));
  EXPECT_EQ(read_file(config), "# edited\n");
}

TEST_F(SystemdUnitTest, VerifyPrintsNothingForTheInstalledUnit) {
  ASSERT_NO_FATAL_FAILURE(install(prefix()));
  const std::vector<std::string> verify = {"systemd-analyze", "verify", unit().string()};
  const CommandResult run = run_command(verify);
  EXPECT_EQ(run.exit_code, 0) << run.describe(verify);
  EXPECT_EQ(run.out + run.err, "") << run.describe(verify);

  // The judge does speak up: the same unit with a misspelled directive is reported.
  const fs::path broken = dir_ / "broken" / "profcollect.service";
  fs::create_directories(broken.parent_path());
  write_file(broken, read_file(unit()) + "[Service]\nProtectSystm=strict\n");
  const std::vector<std::string> verify_broken = {"systemd-analyze", "verify", broken.string()};
  const CommandResult complaint = run_command(verify_broken);
  EXPECT_TRUE(contains_ignoring_case(complaint.out + complaint.err, "ProtectSystm"))
      << complaint.describe(verify_broken);
}

TEST_F(SystemdUnitTest, SecurityExposureIsAtMostTwo) {
  ASSERT_NO_FATAL_FAILURE(install(prefix()));
  const std::vector<std::string> security = {"systemd-analyze", "security", "--offline=yes",
                                             "--no-pager", unit().string()};
  const CommandResult run = run_command(security);
  // systemd-analyze exits non-zero only when the exposure exceeds --threshold (100 by default).
  ASSERT_EQ(run.exit_code, 0) << run.describe(security);
  // "→ Overall exposure level for profcollect.service: 1.0 OK 🙂"
  const std::regex overall(R"(Overall exposure level for profcollect\.service: ([0-9]+\.[0-9]+))");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(run.out, match, overall)) << run.describe(security);
  const double exposure = std::strtod(match[1].str().c_str(), nullptr);
  EXPECT_LE(exposure, kMaxExposure) << run.out;
  // The unit runs as its own user, not as root.
  EXPECT_EQ(run.out.find("Service runs as root user"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace profcollect::test
