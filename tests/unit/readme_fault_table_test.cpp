// docs/usage.md's table of faults and bad inputs names, for each row, the tests that try it: every
// name there must be a test of this suite (a row whose test was renamed or removed would claim
// what nothing checks any more).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace profcollect {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "Suite.Name" of every TEST, TEST_F and TEST_P in the test sources.
std::set<std::string> defined_tests() {
  std::set<std::string> names;
  const std::regex test(R"(TEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\))");
  for (const auto& e :
       fs::recursive_directory_iterator(fs::path(PROFCOLLECT_SOURCE_DIR) / "tests")) {
    if (e.path().extension() != ".cpp") continue;
    const std::string text = slurp(e.path());
    for (std::sregex_iterator it(text.begin(), text.end(), test), end; it != end; ++it) {
      names.insert((*it)[1].str() + "." + (*it)[2].str());
    }
  }
  return names;
}

TEST(ReadmeFaultTable, EveryTestItNamesExists) {
  const std::string readme = slurp(fs::path(PROFCOLLECT_SOURCE_DIR) / "docs" / "usage.md");
  const size_t start = readme.find("## Faults and bad inputs");
  ASSERT_NE(start, std::string::npos) << "docs/usage.md has no fault table";
  const size_t end = readme.find("\n#", start + 1);
  const std::string table =
      readme.substr(start, end == std::string::npos ? std::string::npos : end - start);
  const std::set<std::string> tests = defined_tests();
  size_t rows = 0, named = 0;
  std::istringstream lines(table);
  std::string line;
  const std::regex name(R"(`(\w+)\.(\w+|\*)`)");
  while (std::getline(lines, line)) {
    if (!line.starts_with("| ") || line.starts_with("| fault")) continue;
    ++rows;
    const std::string last = line.substr(line.rfind(" | ") + 3);
    size_t in_row = 0;
    for (std::sregex_iterator it(last.begin(), last.end(), name), e; it != e; ++it) {
      const std::string suite = (*it)[1].str(), test = (*it)[2].str();
      ++in_row;
      if (test == "*") {
        const bool any = std::any_of(tests.begin(), tests.end(), [&](const std::string& t) {
          return t.starts_with(suite + ".");
        });
        EXPECT_TRUE(any) << "no test of suite " << suite << " (docs/usage.md: " << line << ")";
      } else {
        EXPECT_TRUE(tests.count(suite + "." + test))
            << suite << "." << test << " is not a test (docs/usage.md: " << line << ")";
      }
    }
    if (in_row > 0 || last.find("same test") != std::string::npos)
      ++named;
    else
      ADD_FAILURE() << "a row names no test: " << line;
  }
  EXPECT_GE(rows, 15u);
  EXPECT_EQ(named, rows);
}

}  // namespace
}  // namespace profcollect
