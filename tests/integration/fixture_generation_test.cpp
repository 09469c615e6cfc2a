// The ctest setup step of the integration tests (tests/CMakeLists.txt: fixtures.generate, which
// every other integration test requires): makes every registered fixture set, one after the
// other, before any test runs. A set the machine cannot make (a tool missing) is left to its
// tests, which skip saying why; a script that fails fails here, with its output.
#include <gtest/gtest.h>

#include "tests/integration/fixture_set.h"

namespace profcollect::test {
namespace {

TEST(FixtureGeneration, EveryRegisteredSetIsMade) {
  ASSERT_GE(registered_fixture_sets().size(), 7u) << "a fixture set is no longer registered";
  for (auto* accessor : registered_fixture_sets()) {
    const FixtureStatus& status = accessor().status();
    EXPECT_NE(status.state, FixtureState::failed) << status.dir << ": " << status.message;
  }
}

}  // namespace
}  // namespace profcollect::test
