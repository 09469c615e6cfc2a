// A fixture set: files that a script under tests/fixtures/ generates into <build>/fixtures/NAME/
// (programs built and recorded on this machine, never committed), made once and reused until the
// script or one of its inputs changes. Every fixture accessor of the integration tests
// (convert_fixtures(), live_fixtures(), branch_fixtures(), AutofdoFixtureTest) is one of these.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace profcollect::test {

enum class FixtureState { ready, tools_missing, failed };

struct FixtureStatus {
  FixtureState state = FixtureState::failed;
  std::string message;  // why not ready: the script's stderr
  std::filesystem::path dir;
};

// What makes one set and what makes it stale. Every member has a default, so that a designated
// initializer names only what it sets (-Wmissing-field-initializers).
struct FixtureSetSpec {
  // "convert": the set lives in <build>/fixtures/convert/ and is complete when convert.stamp,
  // which the script writes last, is there.
  std::string name{};
  // The script's file name under tests/fixtures/; it is run as `sh SCRIPT OUTDIR ARGUMENTS...`.
  std::string script{};
  std::vector<std::string> arguments{};
  // The program sources, a folder under tests/fixtures/: the set is stale when one of its
  // entries (those `is_source` accepts by file name, all when it is empty) is newer than the stamp.
  // Empty: the script builds no programs (it only records tools already installed).
  std::string source_folder{};
  std::function<bool(std::string_view file_name)> is_source{};
  // Other files the set is made from (a recorder program, ...); a missing one makes it stale.
  std::vector<std::filesystem::path> other_inputs{};
  std::chrono::seconds timeout{600};
};

// One fixture set of the test process, generated at most once per process.
class FixtureSet {
 public:
  explicit FixtureSet(FixtureSetSpec spec) : spec_(std::move(spec)) {}

  // The first call generates the set if it is missing or stale, under a file lock in its
  // folder (ctest runs test processes in parallel: one generates, the others wait and then find
  // it up to date); every call returns that outcome. A script exiting 77 ("a tool is missing or
  // perf cannot record here") is tools_missing, any other failure is failed.
  const FixtureStatus& status();

  // For a test fixture's SetUp: skips the test when the set cannot be made here, fails it when
  // the script failed (gtest runs no test body after either).
  void require_ready();

 private:
  bool up_to_date(const std::filesystem::path& dir) const;
  FixtureStatus generate() const;

  FixtureSetSpec spec_;
  std::once_flag once_;
  FixtureStatus status_;
};

// Every set of the test program, each by its accessor: a file that defines a set registers it
// at static initialization (`const bool registered = register_fixture_set(&my_set);`), so that
// the ctest setup step (fixture_generation_test.cpp) makes them all before any test runs. Made
// there, no set is generated while another test collects: a perf record of a script then
// never runs beside a profcollect that takes build-ids (which makes perf 6.1's own build-id
// pass abort, see convert_stale_build_id_flag_test.cpp), and no test's timing includes a build.
bool register_fixture_set(FixtureSet& (*accessor)());
const std::vector<FixtureSet& (*)()>& registered_fixture_sets();

}  // namespace profcollect::test
