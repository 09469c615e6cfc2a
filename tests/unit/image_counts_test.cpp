// ImageCounts (output/image_counts.h) adds every kind of count of another run or host, and the
// codec's count_files (output/profile_directory.h) keeps each kind in its file, with the no_lbr
// profile beside bolt.fdata only where bolt.fdata does not hold it.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "output/image_counts.h"
#include "output/ip_samples_file.h"
#include "output/profile_directory.h"

namespace profcollect {
namespace {

ImageCounts ip_counts(uint64_t at_main, std::vector<std::string> events) {
  ImageCounts c;
  c.ips.add(0x1010, at_main);
  c.no_lbr.events = std::move(events);
  c.no_lbr.counts[{"main", 0x10}] = at_main;
  return c;
}

BranchSamples one_branch(uint64_t stacks) {
  BranchSamples b;
  b.stacks = stacks;
  b.bolt.add_branch(TakenBranch{0x1010, 0x1020, false, false}, stacks, 1);
  return b;
}

std::vector<std::string> names(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> out;
  for (const auto& [name, content] : files) out.push_back(name);
  return out;
}

TEST(ImageCounts, AddSumsEveryKindAndJoinsTheEvents) {
  ImageCounts total = ip_counts(2, {"cycles:u"});
  ImageCounts more = ip_counts(3, {"cycles:u", "cpu-clock:u"});
  more.ips.add(0x1020, 1);
  more.branches = one_branch(4);

  total.add(more);
  EXPECT_EQ(total.ips.counts().at(0x1010), 5u);
  EXPECT_EQ(total.ips.counts().at(0x1020), 1u);
  EXPECT_EQ(total.ips.total(), 6u);
  EXPECT_EQ(total.no_lbr.events, (std::vector<std::string>{"cycles:u", "cpu-clock:u"}));
  EXPECT_EQ(total.no_lbr.counts.at({"main", 0x10}), 5u);
  ASSERT_TRUE(total.branches.has_value()) << "branch samples make a branch profile";
  EXPECT_EQ(total.branches->stacks, 4u);

  total.add(more);
  EXPECT_EQ(total.branches->stacks, 8u);
  const auto branch = total.branches->bolt.branches().at(TakenBranch{0x1010, 0x1020, false, false});
  EXPECT_EQ(branch.count, 8u);
  EXPECT_EQ(branch.mispredicts, 2u);
  EXPECT_EQ(total.ips.total(), 10u);
}

TEST(ImageCounts, AddingCountsWithoutBranchesKeepsAnIpProfile) {
  ImageCounts total = ip_counts(2, {"cpu-clock:u"});
  total.add(ip_counts(1, {"cpu-clock:u"}));
  EXPECT_FALSE(total.branches.has_value());
  EXPECT_EQ(total.no_lbr.events, (std::vector<std::string>{"cpu-clock:u"}));
}

TEST(ImageCountsFiles, IpSamplesAloneAreKeptInSamplesIp) {
  const ImageCounts c = ip_counts(2, {"cpu-clock:u"});
  EXPECT_EQ(names(count_files(c, BoltFdataKind::NoLbr)), (std::vector<std::string>{"samples.ip"}));
  // Without BOLT's format and without branch stacks the IP samples still add up across runs.
  EXPECT_EQ(names(count_files(c, BoltFdataKind::None)), (std::vector<std::string>{"samples.ip"}));
  std::string why;
  const std::optional<IpProfile> back =
      parse_ip_samples(count_files(c, BoltFdataKind::None).at(0).second, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->counts(), c.ips.counts());
}

TEST(ImageCountsFiles, TheNoLbrProfileGoesBesideABoltFdataThatDoesNotHoldIt) {
  ImageCounts c = ip_counts(2, {"cycles:u"});
  c.branches = one_branch(1);
  EXPECT_EQ(names(count_files(c, BoltFdataKind::Branch)),
            (std::vector<std::string>{"bolt.nolbr.fdata", "samples.ip", "samples.branch"}));
  // BOLT's format not asked for: the no_lbr profile is still kept for the next run.
  EXPECT_EQ(names(count_files(c, BoltFdataKind::None)),
            (std::vector<std::string>{"bolt.nolbr.fdata", "samples.ip", "samples.branch"}));
  // The renderer fell back to no_lbr (no block map): bolt.fdata holds it, no second copy.
  EXPECT_EQ(names(count_files(c, BoltFdataKind::NoLbr)),
            (std::vector<std::string>{"samples.ip", "samples.branch"}));
  std::string why;
  const std::optional<NoLbrFdata> back =
      parse_no_lbr_fdata(count_files(c, BoltFdataKind::Branch).at(0).second, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->counts, c.no_lbr.counts);
  EXPECT_EQ(back->events, c.no_lbr.events);
}

TEST(ImageCountsFiles, NothingCountedHasNoFile) {
  EXPECT_TRUE(count_files(ImageCounts{}, BoltFdataKind::Branch).empty());
}

}  // namespace
}  // namespace profcollect
