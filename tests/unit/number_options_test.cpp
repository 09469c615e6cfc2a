// The checks of numeric options: plain decimal numbers inside each option's range, nothing a
// sign, an exponent, NaN or infinity could turn into another value; and the suggestion for a
// misspelled option.
#include <gtest/gtest.h>

#include "collector/cli/number_options.h"
#include "collector/cli/option_suggestion.h"

namespace profcollect {
namespace {

TEST(NumberOptions, WholeNumbersInsideTheRangeOnly) {
  EXPECT_FALSE(check_whole_number("1", 1, 10));
  EXPECT_FALSE(check_whole_number("10", 1, 10));
  EXPECT_FALSE(check_whole_number("18446744073709551615", 0, UINT64_MAX));
  for (const char* bad : {"0", "11", "-5", "+5", " 5", "5 ", "5x", "0x5", "1e1", "5.0", "", "nan",
                          "inf", "18446744073709551616", "99999999999999999999999"}) {
    const auto why = check_whole_number(bad, 1, 10);
    ASSERT_TRUE(why) << bad;
    EXPECT_NE(why->find("1 to 10"), std::string::npos) << *why;
  }
}

TEST(NumberOptions, SecondsAreFiniteDecimalsInsideTheRange) {
  EXPECT_FALSE(check_seconds("0.5", 0.001, 100));
  EXPECT_FALSE(check_seconds("100", 0.001, 100));
  EXPECT_FALSE(check_seconds(".25", 0.001, 100));
  for (const char* bad : {"inf", "nan", "-inf", "1e400", "1e2", "-1", "0", "100.5", "1..2", ".", "",
                          "0x1p3", "1,5", "infinity"}) {
    EXPECT_TRUE(check_seconds(bad, 0.001, 100)) << bad;
  }
}

TEST(NumberOptions, PowersOfTwo) {
  EXPECT_FALSE(check_power_of_two("1", 1, 1 << 20));
  EXPECT_FALSE(check_power_of_two("1048576", 1, 1 << 20));
  const auto three = check_power_of_two("3", 1, 1 << 20);
  ASSERT_TRUE(three);
  EXPECT_NE(three->find("power of two"), std::string::npos);
  // 2^32 is a power of two, but out of range: the message says the range, not "not a power of two".
  const auto huge = check_power_of_two("4294967296", 1, 1 << 20);
  ASSERT_TRUE(huge);
  EXPECT_NE(huge->find("1 to 1048576"), std::string::npos) << *huge;
}

TEST(NumberOptions, SecondsAreWrittenAsPeopleReadThem) {
  EXPECT_EQ(format_seconds(60), "60 s");
  EXPECT_EQ(format_seconds(0.25), "0.25 s");
  EXPECT_EQ(format_seconds(31622400), "31622400 s");
}

TEST(OptionSuggestion, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("--freq", "--freq"), 0u);
  EXPECT_EQ(edit_distance("--fre", "--freq"), 1u);
  EXPECT_EQ(edit_distance("--frqe", "--freq"), 2u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(OptionSuggestion, NearestKnownSpellingOrNone) {
  CLI::App app;
  int n = 0;
  app.add_option("-F,--freq", n);
  app.add_option("--flush-interval", n);
  auto* sub = app.add_subcommand("convert");
  sub->add_option("-p,--perfdata", n);
  EXPECT_EQ(nearest_option(app, "--fre"), "--freq");
  EXPECT_EQ(nearest_option(app, "--flush-intervall"), "--flush-interval");
  EXPECT_EQ(nearest_option(app, "--perfdat"), "--perfdata");
  EXPECT_FALSE(nearest_option(app, "--completely-different"));
  EXPECT_TRUE(is_known_option(app, "-F"));
  EXPECT_TRUE(is_known_option(app, "-nl"));
  EXPECT_FALSE(is_known_option(app, "--fre"));
}

}  // namespace
}  // namespace profcollect
