#include "output/preagg_writer.h"

#include <gtest/gtest.h>

#include <vector>

namespace profcollect {
namespace {

TEST(PreaggWriterTest, WritesBranchAndRangeRecordsInHexWithoutPrefix) {
  BranchProfile profile;
  const std::vector<BranchStackEntry> stack = {
      {0x11fb, 0x1219, true, true, true},
      {0x7f0000001000, 0x11e7, false, true, false},
  };
  profile.add_stack(stack, 2);
  profile.add_branch(TakenBranch{0x11e2, 0x7f0000002000, false, true}, 5, 1);
  profile.add_fall_through(FallThrough{0x11fd, 0x1217, false}, 7);
  EXPECT_EQ(PreaggWriter::write(profile),
            "B 11e2 X:7f0000002000 5 1\n"
            "B 11fb 1219 2 2\n"
            "B X:7f0000001000 11e7 2 0\n"
            "f 11e7 11fb 2\n"
            "F 11fd 1217 7\n");
}

TEST(PreaggWriterTest, EmptyProfileIsEmptyFile) {
  EXPECT_EQ(PreaggWriter::write(BranchProfile{}), "");
}

}  // namespace
}  // namespace profcollect
