// The branch-stack perf.data files recorded from real executions by branch_recorder
// (tests/fixtures/make_branch_fixtures.sh), generated once into <build>/fixtures/branch/ and
// reused until the script, a branch_* program source or the recorder changes.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/integration/convert_fixtures.h"

namespace profcollect::test {

// Generates the set if missing or stale (under a file lock), and remembers the outcome.
const FixtureStatus& branch_fixtures();

// Base of the tests on the branch fixtures: skips when a tool the script needs is missing,
// fails when the script fails.
class BranchFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // A file of the set: "branch_loop", "branch_loop.data", "libbranchlib.so", ...
  static std::filesystem::path fixture(const std::string& name);
};

}  // namespace profcollect::test
