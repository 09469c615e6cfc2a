// The recorded perf.data files of tests/data/perf-data (see its README.md), listed here once so
// that a file that goes missing fails the tests that read it instead of making their cases
// disappear.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace profcollect::test {

struct RecordedPerfData {
  std::string name;               // file name in tests/data/perf-data
  bool branch_stack = false;      // an attr samples PERF_SAMPLE_BRANCH_STACK
  bool damaged = false;           // perf and we must stop at a damaged record
  bool perf_stops_early = false;  // perf 6.1 stops before the end of a sound file
};

// tests/data/perf-data in the source tree.
std::filesystem::path recorded_perf_data_dir();

// Every file of the directory, sorted by name.
const std::vector<RecordedPerfData>& recorded_perf_data();

// The names of recorded_perf_data(), optionally only those with branch stacks.
std::vector<std::string> recorded_perf_data_names(bool branch_stacks_only = false);

// The path of one of them; the caller asserts it exists.
std::filesystem::path recorded_perf_data_path(const std::string& name);

// A gtest parameter name ("perf_data_branch_4_14") for a file name.
std::string recorded_perf_data_test_name(const std::string& file_name);

}  // namespace profcollect::test
