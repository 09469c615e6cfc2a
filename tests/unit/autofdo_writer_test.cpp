// The sample profile text (formats.md section 4) and the unsymbolized profile (section 5), written
// from profiles built by hand.
#include "output/autofdo_writer.h"
#include "output/unsymbolized_writer.h"

#include <gtest/gtest.h>

namespace profcollect {
namespace {

TEST(AutofdoWriter, WritesFunctionsByTotalWithNestedInlinees) {
  SampleProfile profile;
  FunctionSamples& main_fn = profile["main"];
  main_fn.total = 2609;
  main_fn.head = 3;
  main_fn.body[{0, 0}].count = 0;
  main_fn.body[{3, 0}] = BodySample{62, {{"bar", 21}, {"baz", 40}}};
  FunctionSamples& foo = main_fn.inlinees[{1, 0}]["foo"];
  foo.total = 2609;
  foo.body[{2, 1}].count = 42;
  FunctionSamples& bar = foo.inlinees[{3, 1}]["bar"];
  bar.total = 546;
  bar.body[{1, 0}].count = 42;
  FunctionSamples& small = profile["small"];
  small.total = 10;
  small.body[{65532, 0}].count = 5;

  EXPECT_EQ(write_sample_profile_text(profile),
            "main:2609:3\n"
            " 0: 0\n"
            " 3: 62 baz:40 bar:21\n"
            " 1: foo:2609\n"
            "  2.1: 42\n"
            "  3.1: bar:546\n"
            "   1: 42\n"
            "small:10:0\n"
            " 65532: 5\n");
}

TEST(AutofdoWriter, EqualTotalsAreWrittenByName) {
  SampleProfile profile;
  profile["b"].total = 7;
  profile["a"].total = 7;
  EXPECT_EQ(write_sample_profile_text(profile), "a:7:0\nb:7:0\n");
}

TEST(UnsymbolizedWriter, OffsetsFromThePreferredBaseInLlvmProfgenOrder) {
  RangeProfile profile;
  profile.ranges[{0x1669, 0x1677}] = 20;
  profile.ranges[{0x1650, 0x1691}] = 21;
  profile.ranges[{0x1669, 0x1691}] = 21;
  profile.branches[{0x1691, 0x1669}] = 43;
  profile.branches[{0x1677, 0x1650}] = 21;
  profile.branches[{kExternalAddress, 0x1650}] = 1;  // from outside: llvm-profgen's address 1
  EXPECT_EQ(write_unsymbolized_profile(profile, 0x1000),
            "3\n"
            "650-691:21\n"
            "669-677:20\n"
            "669-691:21\n"
            "3\n"
            "fffffffffffff001->650:1\n"
            "677->650:21\n"
            "691->669:43\n");
}

TEST(UnsymbolizedWriter, IpSamplesAreOneInstructionRanges) {
  IpProfile ips;
  ips.add(0x11f0, 3);
  ips.add(0x1200);
  EXPECT_EQ(write_unsymbolized_profile(ranges_from_ips(ips), 0x1000),
            "2\n1f0-1f0:3\n200-200:1\n0\n");
}

}  // namespace
}  // namespace profcollect
