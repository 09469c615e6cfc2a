// The readers `merge` adds profiles with (branch fdata, bolt.preagg, the LLVM sample profile
// text), fed texts written here from the formats' descriptions (formats.md sections 2-4).
#include <gtest/gtest.h>

#include "output/branch_fdata_reader.h"
#include "output/preagg_reader.h"
#include "output/sample_profile_reader.h"

namespace profcollect {
namespace {

TEST(BranchFdataReader, EscapedNamesAndEqualEdgesAddUp) {
  std::string error;
  const auto fdata = parse_branch_fdata(
      "1 foo\\ bar 10 1 foo\\ bar 20 1 5\n0 [unknown] 7fff0000 1 main 0 0 2\n1 foo\\ bar 10 1 "
      "foo\\ bar 20 2 3\n",
      &error);
  ASSERT_TRUE(fdata) << error;
  ASSERT_EQ(fdata->edges.size(), 2u);
  EXPECT_FALSE(fdata->bolted_collection);
  const auto& edge = fdata->edges.at({"1 foo\\ bar 10", "1 foo\\ bar 20"});
  EXPECT_EQ(edge.mispredicts, 3u);
  EXPECT_EQ(edge.count, 8u);
  EXPECT_EQ(fdata->edges.at({"0 [unknown] 7fff0000", "1 main 0"}).count, 2u);
}

TEST(BranchFdataReader, BoltedCollectionLineIsKeptAndLinesCountFromIt) {
  std::string error;
  const auto fdata = parse_branch_fdata("boltedcollection\n1 a 0 1 a 4 0 3\n", &error);
  ASSERT_TRUE(fdata) << error;
  EXPECT_TRUE(fdata->bolted_collection);
  EXPECT_EQ(fdata->edges.at({"1 a 0", "1 a 4"}).count, 3u);
  EXPECT_EQ(FdataBranchWriter::format(*fdata), "boltedcollection\n1 a 0 1 a 4 0 3\n");
  EXPECT_FALSE(parse_branch_fdata("boltedcollection\n1 a 0 1 a 4 0 x\n", &error));
  EXPECT_EQ(error.rfind("line 2:", 0), 0u) << error;
  // Only a whole first line is the header; anywhere else it is a bad line.
  EXPECT_FALSE(parse_branch_fdata("1 a 0 1 a 4 0 3\nboltedcollection\n", &error));
  EXPECT_EQ(error.rfind("line 2:", 0), 0u) << error;
}

TEST(BranchFdataReader, NoLbrHeaderAndBadCountsAreNamedByLine) {
  std::string error;
  EXPECT_FALSE(parse_branch_fdata("no_lbr cpu-clock:\n1 main 10 4\n", &error));
  EXPECT_EQ(error.rfind("line 1:", 0), 0u) << error;
  EXPECT_FALSE(parse_branch_fdata("1 a 0 1 b 0 0 1\n1 a 0 1 b 0 0 -1\n", &error));
  EXPECT_EQ(error.rfind("line 2:", 0), 0u) << error;
}

TEST(PreaggReader, ExternalEndsAndRangesAddUp) {
  std::string error;
  const auto profile = parse_preagg(
      "B X:ffff0000 401000 3 1\nF 401000 401010 4\nf 401000 401010 2\nF 401000 401010 1\n", &error);
  ASSERT_TRUE(profile) << error;
  const TakenBranch from_outside{0xffff0000, 0x401000, true, false};
  EXPECT_EQ(profile->branches().at(from_outside).count, 3u);
  EXPECT_EQ(profile->branches().at(from_outside).mispredicts, 1u);
  EXPECT_EQ(profile->fall_throughs().at(FallThrough{0x401000, 0x401010, false}), 5u);
  EXPECT_EQ(profile->fall_throughs().at(FallThrough{0x401000, 0x401010, true}), 2u);
  EXPECT_FALSE(parse_preagg("B 1 2 3\n", &error));
  EXPECT_EQ(error.rfind("line 1:", 0), 0u) << error;
}

TEST(SampleProfileReader, NestedInlineesCallTargetsAndRepeatedFunctions) {
  std::string error;
  const auto profile = parse_sample_profile_text(
      "main:500:7\n"
      " 1: 20\n"
      " 2.3: 30 _Z3fooi:12 bar:4\n"
      " 5: _Z3fooi:200\n"
      "  1: 100\n"
      "  2: inner:50\n"
      "   0: 50\n"
      " 6: 9\n"
      "main:10:1\n"
      " 1: 5\n",
      &error);
  ASSERT_TRUE(profile) << error;
  ASSERT_EQ(profile->size(), 1u);
  const FunctionSamples& main = profile->at("main");
  EXPECT_EQ(main.total, 510u);
  EXPECT_EQ(main.head, 8u);
  EXPECT_EQ(main.body.at({1, 0}).count, 25u);
  EXPECT_EQ(main.body.at({2, 3}).call_targets.at("_Z3fooi"), 12u);
  EXPECT_EQ(main.body.at({6, 0}).count, 9u);
  const FunctionSamples& foo = main.inlinees.at({5, 0}).at("_Z3fooi");
  EXPECT_EQ(foo.total, 200u);
  EXPECT_EQ(foo.body.at({1, 0}).count, 100u);
  EXPECT_EQ(foo.inlinees.at({2, 0}).at("inner").body.at({0, 0}).count, 50u);
}

TEST(SampleProfileReader, NamesWithSpacesAndColonsAsLlvmReadsThem) {
  std::string error;
  const auto profile = parse_sample_profile_text(
      "main:40:0\n"
      " 3: 10 operator==<const a::B*, std::vector<a::B> >:6 f:2\n"
      " 6: operator==<const a::B*, std::vector<a::B> >:30\n"
      "  1: 0\n",
      &error);
  ASSERT_TRUE(profile) << error;
  const FunctionSamples& main = profile->at("main");
  EXPECT_EQ(main.body.at({3, 0}).call_targets.at("operator==<const a::B*, std::vector<a::B> >"),
            6u);
  EXPECT_EQ(main.body.at({3, 0}).call_targets.at("f"), 2u);
  EXPECT_EQ(main.inlinees.at({6, 0}).at("operator==<const a::B*, std::vector<a::B> >").total, 30u);
}

TEST(SampleProfileReader, WhatItCannotAddIsRefusedByLine) {
  std::string error;
  EXPECT_FALSE(parse_sample_profile_text("main:1:0\n !CFGChecksum: 12\n", &error));
  EXPECT_EQ(error.rfind("line 2:", 0), 0u) << error;
  EXPECT_FALSE(parse_sample_profile_text("[main:1 @ foo]:5:0\n", &error));
  EXPECT_FALSE(parse_sample_profile_text(" 1: 5\n", &error));
  EXPECT_FALSE(parse_sample_profile_text("main:1:0\n   1: 5\n", &error));
  EXPECT_EQ(error.rfind("line 2:", 0), 0u) << error;
}

}  // namespace
}  // namespace profcollect
