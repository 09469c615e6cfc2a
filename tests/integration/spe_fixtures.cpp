#include "tests/integration/spe_fixtures.h"

#include "tests/integration/fixture_set.h"

namespace profcollect::test {
namespace {

FixtureSet& spe_set() {
  static FixtureSet set({.name = "spe",
                         .script = "make_spe_fixtures.sh",
                         .arguments = {PROFCOLLECT_SPE_FIXTURE_WRITER},
                         .source_folder = "src",
                         .is_source = [](std::string_view file) { return file.starts_with("spe_"); },
                         .other_inputs = {PROFCOLLECT_SPE_FIXTURE_WRITER}});
  return set;
}
[[maybe_unused]] const bool spe_set_registered = register_fixture_set(&spe_set);

}  // namespace

void SpeFixtureTest::SetUp() { spe_set().require_ready(); }

std::filesystem::path SpeFixtureTest::fixture(const std::string& name) {
  return std::filesystem::weakly_canonical(spe_set().status().dir / name);
}

}  // namespace profcollect::test
