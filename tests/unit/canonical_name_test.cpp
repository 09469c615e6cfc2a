// Profile names: LLVM's getCanonicalFnName under the "selected" policy.
#include "mapper/canonical_name.h"

#include <gtest/gtest.h>

namespace profcollect {
namespace {

TEST(CanonicalName, CutsLlvmAndPartSuffixes) {
  EXPECT_EQ(canonical_function_name("_ZL3fooi.llvm.1234567"), "_ZL3fooi");
  EXPECT_EQ(canonical_function_name("foo.part.0"), "foo");
  EXPECT_EQ(canonical_function_name("foo.part.0.llvm.77"), "foo");
}

TEST(CanonicalName, KeepsOtherSuffixes) {
  EXPECT_EQ(canonical_function_name("foo.cold"), "foo.cold");
  EXPECT_EQ(canonical_function_name("foo.isra.0"), "foo.isra.0");
  EXPECT_EQ(canonical_function_name("foo.__uniq.12345"), "foo.__uniq.12345");
  EXPECT_EQ(canonical_function_name("main"), "main");
}

TEST(CanonicalName, OnlyWhenTheSuffixEndsTheName) {
  // The suffix's trailing dot must be the name's last dot.
  EXPECT_EQ(canonical_function_name("foo.llvm.1.cold"), "foo.llvm.1.cold");
  EXPECT_EQ(canonical_function_name("foo.part.3.cold"), "foo.part.3.cold");
}

}  // namespace
}  // namespace profcollect
