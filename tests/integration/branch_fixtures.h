// The branch-stack perf.data files recorded from real executions by branch_recorder
// (tests/fixtures/make_branch_fixtures.sh), generated once into <build>/fixtures/branch/ and
// reused until the script, a branch_* program source or the recorder changes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/convert_fixtures.h"

namespace profcollect::test {

// One recording and the binary whose profile from it is judged.
struct BranchCase {
  const char* data;     // "branch_loop.data"
  const char* binary;   // the file profiled: "branch_loop", "libbranchlib.so", ...
  const char* program;  // the executable that runs it (the library's main program)
};

// Every case of the set: the three programs and the shared library their third one calls.
const std::vector<BranchCase>& branch_cases();

// gtest's name of a case: its binary, '.' made '_'.
std::string branch_case_name(const ::testing::TestParamInfo<BranchCase>& info);

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
