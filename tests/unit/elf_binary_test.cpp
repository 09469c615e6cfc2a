// ElfBinary's error reporting: the file and a plain reason. The well-formed side (segments,
// build-id, debuglink) is checked against readelf in the integration tests.
#include "mapper/elf_binary.h"

#include <elf.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace profcollect {
namespace {

namespace fs = std::filesystem;

std::string reason_for(const std::string& path) {
  try {
    ElfBinary::open(path);
  } catch (const ElfError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_EQ(std::string(e.what()), path + ": " + e.reason());
    return e.reason();
  }
  return "(opened)";
}

class ElfBinaryErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("elf_binary_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ifstream self("/proc/self/exe", std::ios::binary);
    self_.assign(std::istreambuf_iterator<char>(self), {});
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::vector<char>& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  fs::path dir_;
  std::vector<char> self_;  // this test program: a well-formed ELF file
};

TEST_F(ElfBinaryErrors, MissingFile) {
  EXPECT_EQ(reason_for((dir_ / "nothing-here").string()), "No such file or directory");
}

TEST_F(ElfBinaryErrors, Directory) { EXPECT_EQ(reason_for(dir_.string()), "Is a directory"); }

TEST_F(ElfBinaryErrors, NotElf) {
  EXPECT_EQ(reason_for(write("text", {'h', 'e', 'l', 'l', 'o', '\n'})), "not an ELF file");
  EXPECT_EQ(reason_for(write("empty", {})), "not an ELF file");
  std::vector<char> bad_class(self_.begin(), self_.begin() + 64);
  bad_class[EI_CLASS] = 7;
  EXPECT_EQ(reason_for(write("bad_class", bad_class)), "not an ELF file");
}

TEST_F(ElfBinaryErrors, Truncated) {
  ASSERT_GT(self_.size(), 4096u);
  for (size_t keep : {size_t{8}, size_t{64}, size_t{200}, self_.size() / 2, self_.size() - 1}) {
    std::vector<char> cut(self_.begin(), self_.begin() + static_cast<std::ptrdiff_t>(keep));
    EXPECT_EQ(reason_for(write("cut_" + std::to_string(keep), cut)), "truncated ELF file")
        << "kept " << keep << " of " << self_.size() << " bytes";
  }
}

TEST_F(ElfBinaryErrors, PermissionDenied) {
  const std::string path = write("private", self_);
  fs::permissions(path, fs::perms::none);
  if (geteuid() != 0) {
    EXPECT_EQ(reason_for(path), "Permission denied");
    return;
  }
  // Root reads files whatever their mode: check as user nobody, in a child process.
  EXPECT_EXIT(
      {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
        _exit(reason_for(path) == "Permission denied" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(ElfBinaryErrors, WellFormedFileOpens) {
  auto elf = ElfBinary::open(write("copy", self_));
  EXPECT_TRUE(elf->elf_type() == ET_DYN || elf->elf_type() == ET_EXEC);
  EXPECT_FALSE(elf->load_segments().empty());
  EXPECT_FALSE(elf->sections().empty());
  EXPECT_NE(elf->section_by_name(".text"), nullptr);
  EXPECT_EQ(elf->file_size(), self_.size());
}

}  // namespace
}  // namespace profcollect
