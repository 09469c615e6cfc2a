// The vmlinux of the running kernel, checked by build-id: stand-in vmlinuxes (tests/fixtures/
// kernel_src/, linked at the kernel's address) with known build-ids, and a "running kernel"
// notes file cut from a real ELF note section (objcopy's .note.gnu.build-id of one of them) in
// place of /sys/kernel/notes. Build-ids are judged by readelf -n.
#include <gtest/gtest.h>

#include "collector/kernel/kernel_image_locator.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

std::string readelf_build_id(const std::filesystem::path& file) {
  CommandResult r = run_command({"readelf", "-n", file.string()});
  auto pos = r.out.find("Build ID: ");
  if (pos == std::string::npos) return "";
  return r.out.substr(pos + 10, r.out.find('\n', pos) - pos - 10);
}

class KernelImageLocator : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"gcc", "ld", "readelf", "objcopy"}) {
      if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
    }
    const auto src = source_dir() / "tests/fixtures/kernel_src";
    const std::vector<std::string> cc = {"gcc",
                                         "-O1",
                                         "-fno-pic",
                                         "-mcmodel=kernel",
                                         "-ffreestanding",
                                         "-fno-asynchronous-unwind-tables",
                                         "-c",
                                         (src / "fake_vmlinux.c").string(),
                                         "-o",
                                         (dir_ / "vmlinux.o").string()};
    CommandResult r = run_command(cc);
    ASSERT_EQ(r.exit_code, 0) << r.describe(cc);
    // Two kernels of distinct build-ids, as two builds of one release.
    for (const auto& [name, id] :
         {std::pair{"vmlinux-running", "0x11112222333344445555666677778888aaaabbbb"},
          std::pair{"vmlinux-other", "0x99998888777766665555444433332222ccccdddd"}}) {
      const std::vector<std::string> ld = {"ld",
                                           "-T",
                                           (src / "fake_vmlinux.ld").string(),
                                           std::string("--build-id=") + id,
                                           "-o",
                                           (dir_ / name).string(),
                                           (dir_ / "vmlinux.o").string()};
      r = run_command(ld);
      ASSERT_EQ(r.exit_code, 0) << r.describe(ld);
    }
    running_id_ = readelf_build_id(running());
    other_id_ = readelf_build_id(other());
    ASSERT_FALSE(running_id_.empty());
    ASSERT_NE(running_id_, other_id_);
    // The running kernel's notes: the raw bytes of a note section, as /sys/kernel/notes gives them.
    const std::vector<std::string> cut = {"objcopy",          "-O",
                                          "binary",           "--only-section=.note.gnu.build-id",
                                          running().string(), notes().string()};
    r = run_command(cut);
    ASSERT_EQ(r.exit_code, 0) << r.describe(cut);
    ASSERT_GT(std::filesystem::file_size(notes()), 12u);
  }

  std::filesystem::path running() const { return dir_ / "vmlinux-running"; }
  std::filesystem::path other() const { return dir_ / "vmlinux-other"; }
  std::filesystem::path notes() const { return dir_ / "notes"; }

  TempDir dir_;
  std::string running_id_, other_id_;
};

TEST_F(KernelImageLocator, TheNotesFileGivesTheBuildIdReadelfShows) {
  const auto id = read_kernel_build_id(notes().string());
  ASSERT_TRUE(id);
  EXPECT_EQ(id->to_hex(), running_id_);
}

TEST_F(KernelImageLocator, AGivenVmlinuxOfTheRunningKernelIsTaken) {
  KernelImageSettings s;
  s.vmlinux = running().string();
  s.notes_path = notes().string();
  const KernelImage k = locate_kernel_image(s);
  EXPECT_EQ(k.path, running().string());
  EXPECT_EQ(k.build_id.to_hex(), running_id_);
}

TEST_F(KernelImageLocator, AGivenVmlinuxOfAnotherBuildIsRefusedWithBothBuildIds) {
  KernelImageSettings s;
  s.vmlinux = other().string();
  s.notes_path = notes().string();
  try {
    locate_kernel_image(s);
    FAIL() << "a vmlinux of another build-id was taken";
  } catch (const KernelImageMismatch& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(other_id_), std::string::npos) << m;
    EXPECT_NE(m.find(running_id_), std::string::npos) << m;
    EXPECT_NE(m.find(other().string()), std::string::npos) << m;
  }
}

TEST_F(KernelImageLocator, TheSearchPassesOverMissingAndMismatchedFilesAndSaysWhy) {
  KernelImageSettings s;
  s.notes_path = notes().string();
  s.candidates = {(dir_ / "missing").string(), other().string(), running().string()};
  const KernelImage k = locate_kernel_image(s);
  EXPECT_EQ(k.path, running().string());
  ASSERT_EQ(k.notes.size(), 1u);
  EXPECT_NE(k.notes[0].find(other_id_), std::string::npos) << k.notes[0];
  EXPECT_NE(k.notes[0].find(running_id_), std::string::npos) << k.notes[0];

  s.candidates = {(dir_ / "missing").string(), other().string()};
  const KernelImage none = locate_kernel_image(s);
  EXPECT_TRUE(none.path.empty());
  ASSERT_EQ(none.notes.size(), 2u);
  EXPECT_NE(none.notes[1].find("missing"), std::string::npos) << none.notes[1];
}

TEST_F(KernelImageLocator, TheDefaultPlacesAreTheDistributionsOnes) {
  EXPECT_EQ(kernel_image_candidates("6.1.0-9-amd64"),
            (std::vector<std::string>{"/usr/lib/debug/boot/vmlinux-6.1.0-9-amd64",
                                      "/lib/modules/6.1.0-9-amd64/build/vmlinux",
                                      "/boot/vmlinux-6.1.0-9-amd64"}));
}

// The command refuses it before collecting, naming both build-ids.
TEST_F(KernelImageLocator, KernelCommandRefusesAMismatchedVmlinux) {
  const std::vector<std::string> argv = {profcollect_exe().string(),
                                         "kernel",
                                         "--duration",
                                         "1",
                                         "--vmlinux",
                                         other().string(),
                                         "--kernel-notes",
                                         notes().string(),
                                         "-o",
                                         (dir_ / "out").string()};
  const CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 1) << r.describe(argv);
  EXPECT_NE(r.err.find(other_id_), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(running_id_), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--vmlinux"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace profcollect::test
