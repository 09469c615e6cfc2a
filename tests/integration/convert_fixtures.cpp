#include "tests/integration/convert_fixtures.h"

#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

FixtureSet& convert_set() {
  static FixtureSet set(
      {.name = "convert", .script = "make_convert_fixtures.sh", .source_folder = "src"});
  return set;
}
[[maybe_unused]] const bool convert_set_registered = register_fixture_set(&convert_set);

}  // namespace

const FixtureStatus& convert_fixtures() { return convert_set().status(); }

void ConvertFixtureTest::SetUp() { convert_set().require_ready(); }

std::filesystem::path ConvertFixtureTest::fixture(const std::string& name) {
  // Canonical, so paths compare equal to the ones the kernel recorded in MMAP events.
  return std::filesystem::weakly_canonical(convert_fixtures().dir / name);
}

bool ConvertFixtureTest::tool_missing(const std::string& tool) { return !have_executable(tool); }

}  // namespace profcollect::test
