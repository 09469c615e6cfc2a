#include "tests/integration/branch_fixtures.h"

namespace profcollect::test {
namespace {

// The set is stale when the script, a branch_* program source or the recorder changes.
FixtureSet& branch_set() {
  static FixtureSet set(
      {.name = "branch",
       .script = "make_branch_fixtures.sh",
       .arguments = {PROFCOLLECT_BRANCH_RECORDER},
       .source_folder = "src",
       .is_source = [](std::string_view file) { return file.starts_with("branch_"); },
       .other_inputs = {PROFCOLLECT_BRANCH_RECORDER}});
  return set;
}
[[maybe_unused]] const bool branch_set_registered = register_fixture_set(&branch_set);

}  // namespace

const std::vector<BranchCase>& branch_cases() {
  static const std::vector<BranchCase> cases = {
      {"branch_loop.data", "branch_loop", "branch_loop"},
      {"branch_virtual.data", "branch_virtual", "branch_virtual"},
      {"branch_lib.data", "libbranchlib.so", "branch_lib_main"},
      {"branch_lib.data", "branch_lib_main", "branch_lib_main"},
  };
  return cases;
}

std::string branch_case_name(const ::testing::TestParamInfo<BranchCase>& info) {
  std::string name = info.param.binary;
  for (char& c : name) {
    if (c == '.') c = '_';
  }
  return name;
}

const FixtureStatus& branch_fixtures() { return branch_set().status(); }

void BranchFixtureTest::SetUp() { branch_set().require_ready(); }

std::filesystem::path BranchFixtureTest::fixture(const std::string& name) {
  // Canonical, so paths compare equal to the ones recorded in MMAP2 events.
  return std::filesystem::weakly_canonical(branch_fixtures().dir / name);
}

}  // namespace profcollect::test
