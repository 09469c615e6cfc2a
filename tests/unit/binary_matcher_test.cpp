// BinaryMatcher: which mapped files are the target, by build-id first, then by name.
#include "mapper/binary_matcher.h"

#include <gtest/gtest.h>

namespace profcollect {
namespace {

BuildId id(const char* hex) { return *BuildId::from_hex(hex); }

Dso file(const char* path, const char* build_id = nullptr) {
  Dso d;
  d.path = path;
  if (build_id) d.build_id = id(build_id);
  return d;
}

TEST(BinaryMatcher, SameBuildIdMatchesWhateverThePath) {
  BinaryMatcher m("/home/u/hot", id("aabbcc"), false, nullptr);
  EXPECT_EQ(m.match(file("/tmp/renamed", "aabbcc")), DsoMatch::Target);
  EXPECT_EQ(m.match(file("/usr/bin/ls", "112233")), DsoMatch::Other);
}

TEST(BinaryMatcher, SameNameOtherBuildIdIsAMismatchUnlessIgnored) {
  BinaryMatcher strict("/home/u/hot", id("aabbcc"), false, nullptr);
  EXPECT_EQ(strict.match(file("/home/u/hot", "ddeeff")), DsoMatch::BuildIdMismatch);
  BinaryMatcher lax("/home/u/hot", id("aabbcc"), true, nullptr);
  EXPECT_EQ(lax.match(file("/home/u/hot", "ddeeff")), DsoMatch::Target);
}

TEST(BinaryMatcher, PerfsPaddedBuildIdEqualsTheShortNote) {
  BinaryMatcher m("/x/hot", id("0123456789abcdef"), false, nullptr);
  EXPECT_EQ(m.match(file("/x/hot", "0123456789abcdef000000000000000000000000")), DsoMatch::Target);
}

TEST(BinaryMatcher, WithoutBuildIdsTheFileNameDecides) {
  BinaryMatcher m("./build/hot", BuildId(), false, nullptr);
  EXPECT_EQ(m.match(file("/home/u/src/build/hot")), DsoMatch::Target);
  EXPECT_EQ(m.match(file("/home/u/src/build/hot (deleted)")), DsoMatch::Target);
  EXPECT_EQ(m.match(file("/home/u/src/build/hotter")), DsoMatch::Other);
}

TEST(BinaryMatcher, RecordedBuildIdTableIsConsulted) {
  BuildId recorded = id("ddeeff");
  BinaryMatcher m("/x/hot", id("aabbcc"), false, [&](std::string_view p) -> const BuildId* {
    return p == "/x/hot" ? &recorded : nullptr;
  });
  EXPECT_EQ(m.match(file("/x/hot")), DsoMatch::BuildIdMismatch);
}

TEST(BinaryMatcher, KernelAndAnonymousMappingsAreNamedAsSuch) {
  BinaryMatcher m("/x/hot", BuildId(), false, nullptr);
  Dso k = file("[kernel.kallsyms]_text");
  k.kernel = true;
  EXPECT_EQ(m.match(k), DsoMatch::Kernel);
  EXPECT_EQ(m.match(file("//anon")), DsoMatch::Anon);
  EXPECT_EQ(m.match(file("/memfd:jit (deleted)")), DsoMatch::Anon);
  EXPECT_EQ(m.match(file("[vdso]")), DsoMatch::Other);
}

Dso kernel_mapping(const char* path, const char* build_id = nullptr) {
  Dso d = file(path, build_id);
  d.kernel = true;
  return d;
}

TEST(BinaryMatcher, AKernelImageMatchesTheKernelsMappingOnly) {
  BinaryMatcher m("/boot/vmlinux-6.1", BuildId(), false, nullptr, ImageKind::Kernel);
  EXPECT_EQ(m.match(kernel_mapping("[kernel.kallsyms]_text")), DsoMatch::Target);
  EXPECT_EQ(m.match(kernel_mapping("/lib/modules/6.1/kernel/fs/fuse/fuse.ko")), DsoMatch::Kernel);
  EXPECT_EQ(m.match(file("/boot/vmlinux-6.1")), DsoMatch::Other);
  EXPECT_EQ(m.match(file("//anon")), DsoMatch::Anon);
}

TEST(BinaryMatcher, AKernelImagesBuildIdIsListedAsKernelKallsyms) {
  BuildId recorded = id("ddeeff");
  auto listed = [&](std::string_view p) -> const BuildId* {
    return p == "[kernel.kallsyms]" ? &recorded : nullptr;
  };
  BinaryMatcher other("/boot/vmlinux", id("aabbcc"), false, listed, ImageKind::Kernel);
  EXPECT_EQ(other.match(kernel_mapping("[kernel.kallsyms]_text")), DsoMatch::BuildIdMismatch);
  BinaryMatcher same("/boot/vmlinux", id("ddeeff"), false, listed, ImageKind::Kernel);
  EXPECT_EQ(same.match(kernel_mapping("[kernel.kallsyms]_text")), DsoMatch::Target);
  EXPECT_EQ(same.match(kernel_mapping("[kernel.kallsyms]_text", "aabbcc")),
            DsoMatch::BuildIdMismatch);
}

TEST(BinaryMatcher, AModuleMatchesTheModuleMappingOfItsName) {
  BinaryMatcher m("/tmp/build/fake-mod.ko", BuildId(), false, nullptr, ImageKind::KernelModule);
  EXPECT_EQ(m.match(kernel_mapping("/lib/modules/6.1/extra/fake-mod.ko")), DsoMatch::Target);
  EXPECT_EQ(m.match(kernel_mapping("[fake_mod]")), DsoMatch::Target);
  EXPECT_EQ(m.match(kernel_mapping("[fuse]")), DsoMatch::Other);
  EXPECT_EQ(m.match(kernel_mapping("[kernel.kallsyms]_text")), DsoMatch::Kernel);
  EXPECT_EQ(m.match(file("/tmp/build/fake-mod.ko")), DsoMatch::Other);
}

}  // namespace
}  // namespace profcollect
