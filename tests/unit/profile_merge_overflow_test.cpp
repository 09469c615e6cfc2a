// merge adds 64-bit counts with a check (output/profile_merge.h): a sum past 2^64 - 1 is an
// error naming the input file that took it there, never a count that wrapped to a small one.
#include <gtest/gtest.h>

#include "output/profile_merge.h"
#include "tests/unit/profile_directory_fixtures.h"

namespace profcollect {
namespace {

using namespace profcollect::test;

TEST(ProfileMergeOverflow, SamplesPast2To64AreAnErrorNamingTheFile) {
  ScratchDirectory dir;
  // 7 * 2^60 samples on each host: two hosts' sum is 14 * 2^60 < 2^64, three hosts' is not.
  const uint64_t scale = uint64_t{1} << 60;
  for (const char* host : {"a", "b", "c"}) write_app(dir.path / host, app_run(scale));
  EXPECT_NO_THROW(merge_profile_directories({(dir.path / "a").string(), (dir.path / "b").string()},
                                            (dir.path / "two").string()));
  try {
    merge_profile_directories(
        {(dir.path / "a").string(), (dir.path / "b").string(), (dir.path / "c").string()},
        (dir.path / "three").string());
    ADD_FAILURE() << "merged past 2^64";
  } catch (const OutputError& e) {
    const std::string c = (dir.path / "c" / app().directory_name()).string();
    EXPECT_TRUE(e.path().starts_with(c + "/")) << e.what();
    EXPECT_NE(std::string(e.what()).find("past 2^64"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path / "three" / app().directory_name()));
}

}  // namespace
}  // namespace profcollect
