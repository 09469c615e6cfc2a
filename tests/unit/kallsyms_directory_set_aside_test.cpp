// The kernel's kallsyms directory read by the profile directory codec (output/profile_directory.h):
// a functions.txt truncated at a line boundary no longer adds up to meta.json's kernel_samples,
// and the store's reading sets the directory's files aside -- not the hidden entries of a write
// in progress -- and makes the renames durable.
#include <gtest/gtest.h>

#include "output/profile_directory.h"
#include "output/profile_generation.h"
#include "tests/unit/profile_directory_fixtures.h"

namespace profcollect {
namespace {

using namespace profcollect::test;

KallsymsProfile kernel_profile() {
  const std::vector<KernelSymbol> symbols = {{0x1000, "f", ""}, {0x1100, "g", ""}};
  KallsymsProfile p;
  p.functions = summarize_kernel_functions({{0x1004, 5}, {0x1104, 3}}, symbols, 0x2000, {});
  p.text_offsets.add(0x1004, 5);
  p.text_offsets.add(0x1104, 3);
  p.first_sample_ns = p.last_sample_ns = 100;
  return p;
}

TEST(KallsymsDirectorySetAside, ATruncatedFunctionsTxtIsSetAsideHiddenEntriesLeftAlone) {
  ScratchDirectory dir;
  const std::string name = "kernel.kallsyms-" + std::string(kBuildId);
  const DirectoryHandle output = DirectoryHandle::open_path(dir.path.string(), 0700);
  write_generation(output, name, render_kallsyms_profile(kernel_profile(), {kBuildId, "cycles"}));
  const fs::path sub = dir.path / name;
  ASSERT_TRUE(
      read_kallsyms_directory(*output.open_subdirectory(name), DirectoryStrictness::Merge).profile);

  put(sub / "functions.txt", without_last_line(slurp(sub / "functions.txt")));
  put(sub / ".functions.txt.tmp-0123456789ab", "a write in progress\n");
  const KallsymsDirectory read =
      read_kallsyms_directory(*output.open_subdirectory(name), DirectoryStrictness::Store);
  EXPECT_FALSE(read.profile);
  ASSERT_EQ(read.faults.size(), 1u);
  EXPECT_EQ(read.faults[0].file, (sub / "functions.txt").string()) << read.faults[0].text();
  EXPECT_TRUE(fs::exists(sub / ".functions.txt.tmp-0123456789ab"));
  size_t set_aside = 0;
  for (const auto& entry : fs::directory_iterator(sub))
    set_aside += is_set_aside(entry.path().filename().string());
  EXPECT_EQ(set_aside, 4u) << "autofdo.unsym, functions.txt, samples.ip and meta.json";
}

TEST(KallsymsDirectorySetAside, AnotherKernelsProfileUnderThisKernelsNameIsRefused) {
  ScratchDirectory dir;
  const std::string name = "kernel.kallsyms-" + std::string(kBuildId);
  const DirectoryHandle output = DirectoryHandle::open_path(dir.path.string(), 0700);
  write_generation(output, name,
                   render_kallsyms_profile(kernel_profile(), {kOtherBuildId, "cycles"}));
  EXPECT_THROW(read_kallsyms_directory(*output.open_subdirectory(name), DirectoryStrictness::Merge),
               OutputError);
}

}  // namespace
}  // namespace profcollect
