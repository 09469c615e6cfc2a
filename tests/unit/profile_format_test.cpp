// The format registry: every format once, by name and file as the documentation gives them, and
// the one parser of format lists that convert, the kernel command and the daemon use.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "output/profile_format.h"

namespace profcollect {
namespace {

TEST(ProfileFormat, EachFormatHasOneNameOneFileAndTheWaysToMakeIt) {
  std::set<std::string_view> names, files;
  for (ProfileFormat f : profile_formats()) {
    EXPECT_TRUE(names.insert(f->name).second) << f->name;
    EXPECT_TRUE(files.insert(f->file).second) << f->file;
    EXPECT_FALSE(f->description.empty()) << f->name;
    EXPECT_NE(f->render, nullptr) << f->name;
    EXPECT_EQ(find_format(f->name), f);
  }
  // The names and files a binary's directory has always had (docs/usage.md, "Output").
  EXPECT_EQ(format_named("bolt")->file, "bolt.fdata");
  EXPECT_EQ(format_named("preagg")->file, "bolt.preagg");
  EXPECT_EQ(format_named("autofdo")->file, "autofdo.prof");
  EXPECT_EQ(format_named("unsymbolized")->file, "autofdo.unsym");
  EXPECT_EQ(find_format("perfdata"), nullptr);
  EXPECT_THROW(format_named("perfdata"), std::logic_error);
}

TEST(ProfileFormat, ALiveCollectionWritesBoltPreaggInferredAndAutofdoByDefault) {
  std::vector<std::string_view> names;
  for (ProfileFormat f : live_default_formats()) names.push_back(f->name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"bolt", "preagg", "bolt-inferred", "autofdo"}));
}

TEST(ProfileFormat, AListIsParsedInItsOrderEachFormatOnce) {
  const auto formats = parse_format_list("autofdo,bolt,autofdo");
  ASSERT_EQ(formats.size(), 2u);
  EXPECT_EQ(formats[0]->name, "autofdo");
  EXPECT_EQ(formats[1]->name, "bolt");
}

TEST(ProfileFormat, AnUnknownOrEmptyNameIsRefusedNamingTheSettingAndTheChoices) {
  try {
    parse_format_list("bolt,perfdata");
    FAIL() << "perfdata accepted";
  } catch (const FormatListError& e) {
    EXPECT_EQ(std::string(e.what()),
              "{format}: 'perfdata' is not one of bolt, preagg, bolt-inferred, autofdo, "
              "unsymbolized, propeller");
  }
  EXPECT_THROW(parse_format_list(""), FormatListError);
  EXPECT_THROW(parse_format_list("bolt,,autofdo"), FormatListError);
}

TEST(ProfileFormat, TheKernelProfileHasNoPreAggregatedFormat) {
  EXPECT_EQ(format_names(/*kernel=*/true), "bolt, autofdo, unsymbolized, propeller");
  EXPECT_THROW(parse_format_list("preagg", /*kernel=*/true), FormatListError);
  EXPECT_EQ(parse_format_list("unsymbolized,bolt", /*kernel=*/true).size(), 2u);
}

}  // namespace
}  // namespace profcollect
