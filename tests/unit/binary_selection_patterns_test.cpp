// The daemon's binaries / exclude settings: regular expressions searched for in a mapped path
// select binaries, and an exclusion wins over every way of selecting one.
#include <gtest/gtest.h>

#include "collector/pipeline/mapped_image_selector.h"

namespace profcollect {
namespace {

Dso dso(const std::string& path) {
  Dso d;
  d.path = path;
  return d;
}

std::regex re(const std::string& p) { return std::regex(p, std::regex::ECMAScript); }

TEST(BinarySelectionPatterns, APatternSelectsTheBinariesWhosePathItIsFoundIn) {
  BinarySelection s;
  s.patterns = {re("^/usr/bin/"), re("libfoo\\.so")};
  EXPECT_TRUE(s.selects(dso("/usr/bin/bash")));
  EXPECT_TRUE(s.selects(dso("/opt/lib/libfoo.so.1")));
  EXPECT_FALSE(s.selects(dso("/usr/local/bin/bash")));
  EXPECT_FALSE(s.selects(dso("/opt/lib/libfooXso")));
}

TEST(BinarySelectionPatterns, AnExclusionWinsOverEveryWayOfSelecting) {
  BinarySelection s;
  s.all = true;
  s.exclude = {re("/tmp/")};
  EXPECT_TRUE(s.selects(dso("/usr/bin/bash")));
  EXPECT_FALSE(s.selects(dso("/tmp/a.out")));
  BinarySelection named;
  named.paths = {"/tmp/a.out"};
  named.patterns = {re("^/tmp/")};
  named.exclude = {re("a\\.out$")};
  EXPECT_FALSE(named.selects(dso("/tmp/a.out")));
  EXPECT_TRUE(named.selects(dso("/tmp/b.out")));
}

}  // namespace
}  // namespace profcollect
