// Where convert's -o points decides how it is written: "-" is standard output, a device or FIFO
// is written into and stays what it is, a regular file is replaced keeping its mode and owner,
// and a symlink keeps pointing at the replaced file. The content is the same profile every time:
// each case is compared with the profile written to a plain new file.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <future>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

class ConvertOutputTargetsTest : public ConvertFixtureTest {
 protected:
  std::vector<std::string> convert_to(const std::string& out) const {
    return {"convert", "-p", fixture("hot_gcc.data").string(), "-o", out,
            "-nl",     "-q", fixture("hot_gcc").string()};
  }
  // The profile as written to a new regular file: what every other target must receive.
  std::string reference() {
    const auto path = tmp_ / "reference.fdata";
    const ProfcollectRun r = run_profcollect(convert_to(path.string()));
    EXPECT_EQ(r.run.exit_code, 0) << r.describe();
    const std::string text = read_file(path);
    EXPECT_FALSE(text.empty());
    return text;
  }
  TempDir tmp_;
};

TEST_F(ConvertOutputTargetsTest, DashIsStandardOutput) {
  const std::string expected = reference();
  const ProfcollectRun r = run_profcollect(convert_to("-"));
  ASSERT_EQ(r.run.exit_code, 0) << r.describe();
  EXPECT_EQ(r.run.out, expected);
  EXPECT_FALSE(fs::exists(fs::current_path() / "-"));
}

TEST_F(ConvertOutputTargetsTest, DevNullStaysADevice) {
  struct stat before {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  ASSERT_TRUE(S_ISCHR(before.st_mode));
  const ProfcollectRun r = run_profcollect(convert_to("/dev/null"));
  EXPECT_EQ(r.run.exit_code, 0) << r.describe();
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode)) << "/dev/null was replaced";
  EXPECT_EQ(after.st_rdev, before.st_rdev);
  EXPECT_EQ(after.st_ino, before.st_ino);
}

TEST_F(ConvertOutputTargetsTest, DevFullIsAnErrorNamingTheDeviceAndStaysADevice) {
  const ProfcollectRun r = run_profcollect(convert_to("/dev/full"));
  EXPECT_EQ(r.run.exit_code, 1) << r.describe();
  EXPECT_NE(r.run.err.find("/dev/full"), std::string::npos) << r.describe();
  EXPECT_NE(r.run.err.find(std::strerror(ENOSPC)), std::string::npos) << r.describe();
  struct stat after {};
  ASSERT_EQ(::stat("/dev/full", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
}

TEST_F(ConvertOutputTargetsTest, FifoReaderGetsTheProfileAndTheFifoStays) {
  const std::string expected = reference();
  const auto fifo = tmp_ / "profile.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader opens the FIFO (waiting for the writer) and reads to its end.
  auto reader = std::async(std::launch::async, [&] { return read_file(fifo); });
  const ProfcollectRun r = run_profcollect(convert_to(fifo.string()));
  EXPECT_EQ(r.run.exit_code, 0) << r.describe();
  ASSERT_EQ(reader.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  EXPECT_EQ(reader.get(), expected);
  struct stat after {};
  ASSERT_EQ(::lstat(fifo.c_str(), &after), 0);
  EXPECT_TRUE(S_ISFIFO(after.st_mode));
  EXPECT_EQ(tmp_.entries(), (std::vector<std::string>{"profile.fifo", "reference.fdata"}));
}

TEST_F(ConvertOutputTargetsTest, ReplacedFileKeepsItsModeAndOwner) {
  const std::string expected = reference();
  const auto out = tmp_ / "existing.fdata";
  write_file(out, "old profile\n");
  ASSERT_EQ(::chmod(out.c_str(), 0640), 0);
  const bool root = ::geteuid() == 0;
  if (root) {
    ASSERT_EQ(::chown(out.c_str(), 4321, 4322), 0);
  }
  const ProfcollectRun r = run_profcollect(convert_to(out.string()));
  ASSERT_EQ(r.run.exit_code, 0) << r.describe();
  EXPECT_EQ(read_file(out), expected);
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  if (root) {
    EXPECT_EQ(st.st_uid, 4321u);
    EXPECT_EQ(st.st_gid, 4322u);
  }
}

TEST_F(ConvertOutputTargetsTest, SymlinkIsKeptAndItsFileReplaced) {
  const std::string expected = reference();
  const auto target = tmp_ / "target.fdata";
  const auto link = tmp_ / "link.fdata";
  write_file(target, "old\n");
  fs::create_symlink(target, link);
  const ProfcollectRun r = run_profcollect(convert_to(link.string()));
  ASSERT_EQ(r.run.exit_code, 0) << r.describe();
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_file(target), expected);
}

TEST_F(ConvertOutputTargetsTest, SeveralFormatsToStandardOutputIsAUsageError) {
  const ProfcollectRun r =
      run_profcollect({"convert", "-p", fixture("hot_gcc.data").string(), "--format",
                       "bolt,autofdo", "-o", "-", fixture("hot_gcc").string()});
  EXPECT_EQ(r.run.exit_code, 2) << r.describe();
  EXPECT_TRUE(r.run.out.empty());
}

}  // namespace
}  // namespace profcollect::test
