#include "record/build_id.h"

#include <gtest/gtest.h>

namespace profcollect {
namespace {

TEST(BuildId, HexRoundTrip) {
  auto id = BuildId::from_hex("0123456789ABCDEFfedcba9876543210deadbeef");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->size(), 20u);
  EXPECT_EQ(id->to_hex(), "0123456789abcdeffedcba9876543210deadbeef");
}

TEST(BuildId, RejectsBadHex) {
  EXPECT_FALSE(BuildId::from_hex("abc"));
  EXPECT_FALSE(BuildId::from_hex("zz"));
  EXPECT_FALSE(BuildId::from_hex(std::string(42, 'a')));
}

TEST(BuildId, TrailingZeroPaddingIsIgnoredInComparison) {
  EXPECT_EQ(*BuildId::from_hex("abcd"), *BuildId::from_hex("abcd0000"));
  EXPECT_NE(*BuildId::from_hex("abcd"), *BuildId::from_hex("abce"));
  EXPECT_TRUE(BuildId().empty());
}

}  // namespace
}  // namespace profcollect
