// AtomicFileWriter: a reader sees the old file or the whole new one, never a part.
#include "output/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <cstdlib>
#include <unistd.h>

namespace profcollect {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("profcollect-atomic-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  size_t entries() const {
    return std::distance(fs::directory_iterator(dir_), fs::directory_iterator());
  }
  fs::path dir_;
};

TEST_F(AtomicFileTest, CommitReplacesTheFileWhole) {
  auto path = (dir_ / "out.fdata").string();
  write_file_atomically(path, "old\n");
  AtomicFileWriter w(path);
  w.write("new ");
  EXPECT_EQ(slurp(path), "old\n") << "nothing is visible before commit";
  w.write("content\n");
  w.commit();
  EXPECT_EQ(slurp(path), "new content\n");
  EXPECT_EQ(entries(), 1u) << "no temporary file is left";
}

TEST_F(AtomicFileTest, AbandonedWriterLeavesNothing) {
  auto path = (dir_ / "out.fdata").string();
  {
    AtomicFileWriter w(path);
    w.write("partial");
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(entries(), 0u);
}

TEST_F(AtomicFileTest, MissingDirectoryFailsAtOnceNamingThePath) {
  auto path = (dir_ / "no" / "such" / "out.fdata").string();
  try {
    AtomicFileWriter w(path);
    FAIL() << "expected OutputError";
  } catch (const OutputError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST_F(AtomicFileTest, DirectoryAsTargetIsRefused) {
  EXPECT_THROW(AtomicFileWriter w(dir_.string()), OutputError);
}

TEST_F(AtomicFileTest, FullDiskIsAnErrorAndTheOldFileSurvives) {
  // A 64 KiB tmpfs fills up for real; needs root (CAP_SYS_ADMIN) to mount.
  fs::path mnt = dir_ / "small";
  fs::create_directories(mnt);
  std::string cmd = "mount -t tmpfs -o size=64k tmpfs '" + mnt.string() + "' 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  auto path = (mnt / "out.fdata").string();
  write_file_atomically(path, "good\n");
  bool failed = false;
  try {
    AtomicFileWriter w(path);
    w.write(std::string(1 << 20, 'x'));
    w.commit();
  } catch (const OutputError& e) {
    failed = true;
    EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(failed) << "a 1 MiB write to a 64 KiB file system must fail";
  EXPECT_EQ(slurp(path), "good\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(mnt), fs::directory_iterator()), 1);
  std::system(("umount '" + mnt.string() + "'").c_str());
}

}  // namespace
}  // namespace profcollect
