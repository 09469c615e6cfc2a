// The recorded programs the convert/report tests judge (tests/fixtures/make_convert_fixtures.sh),
// generated once into <build>/fixtures/convert/ and reused until the script or its sources change.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/integration/fixture_set.h"

namespace profcollect::test {

// Generates the fixtures if they are missing or older than the script (under a file lock, so
// tests that ctest runs in parallel generate them once), and remembers the outcome.
const FixtureStatus& convert_fixtures();

// Base of every convert/report test: skips when a tool the fixtures need is missing, fails when
// the fixture script fails, and names the fixture files.
class ConvertFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override;

  // A file of the fixture set: "hot_gcc", "hot_gcc.data", "libwork.so", ...
  static std::filesystem::path fixture(const std::string& name);

  // Whether a judge tool is absent (a name in PATH or an absolute path); see REQUIRE_TOOL.
  static bool tool_missing(const std::string& tool);
};

// Skips the current test with the reason when a judge tool is not installed.
#define REQUIRE_TOOL(tool)                                           \
  do {                                                               \
    if (::profcollect::test::ConvertFixtureTest::tool_missing(tool)) \
      GTEST_SKIP() << (tool) << " is not installed";                 \
  } while (0)

}  // namespace profcollect::test
