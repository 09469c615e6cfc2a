#include "tests/integration/branch_fixtures.h"

namespace profcollect::test {
namespace {

// The set is stale when the script, a branch_* program source or the recorder changes.
FixtureSet& branch_set() {
  static FixtureSet set({.name = "branch",
                         .script = "make_branch_fixtures.sh",
                         .arguments = {PROFCOLLECT_BRANCH_RECORDER},
                         .source_folder = "src",
                         .is_source = [](std::string_view file) { return file.starts_with("branch_"); },
                         .other_inputs = {PROFCOLLECT_BRANCH_RECORDER}});
  return set;
}

}  // namespace

const FixtureStatus& branch_fixtures() { return branch_set().status(); }

void BranchFixtureTest::SetUp() { branch_set().require_ready(); }

std::filesystem::path BranchFixtureTest::fixture(const std::string& name) {
  // Canonical, so paths compare equal to the ones recorded in MMAP2 events.
  return std::filesystem::weakly_canonical(branch_fixtures().dir / name);
}

}  // namespace profcollect::test
