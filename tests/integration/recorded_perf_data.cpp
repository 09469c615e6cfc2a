#include "tests/integration/recorded_perf_data.h"

#include <cctype>

#include "tests/integration/test_support.h"

namespace profcollect::test {

std::filesystem::path recorded_perf_data_dir() {
  return source_dir() / "tests" / "data" / "perf-data";
}

const std::vector<RecordedPerfData>& recorded_perf_data() {
  // {name, branch_stack, damaged, perf_stops_early}; README.md says what each exercises.
  static const std::vector<RecordedPerfData> kFiles = {
      {"perf.data.armv7-3.4", false, false, false},
      {"perf.data.branch-4.14", true, false, false},
      {"perf.data.branch_stack_hw_index", true, false, false},
      {"perf.data.branch_stack_spec", true, false, false},
      {"perf.data.busy.0-3.4", false, false, false},
      {"perf.data.busy.0-3.8", false, false, false},
      {"perf.data.busy.1-3.4", false, false, false},
      {"perf.data.busy.1-3.8", false, false, false},
      {"perf.data.callgraph-3.4", false, false, false},
      {"perf.data.callgraph-3.8", false, false, false},
      {"perf.data.callgraph_and_branch-3.4", true, false, false},
      {"perf.data.ctx_switch_namespaces-4.14", false, false, false},
      {"perf.data.forkexit-3.8", false, false, false},
      {"perf.data.group_desc-4.14", false, false, false},
      {"perf.data.hw_and_sw-3.4", false, false, false},
      {"perf.data.i686-3.4", false, false, false},
      {"perf.data.intel_pt-4.14", false, false, false},
      {"perf.data.lost_samples-4.4", false, false, false},
      {"perf.data.numatopology-3.2", false, false, false},
      {"perf.data.piped.corrupted.zero_size_sample-3.2", false, true, false},
      {"perf.data.piped.ctx_switch_namespaces-4.14", false, false, false},
      {"perf.data.piped.header_features-4.16", false, false, false},
      {"perf.data.piped.header_feautres_group_desc-6.8", false, false, false},
      {"perf.data.piped.hw_and_sw-3.4", false, false, false},
      {"perf.data.piped.intel_pt-4.14", false, false, true},
      {"perf.data.piped.lost_samples-4.4", false, false, false},
      {"perf.data.piped.no_attr_ids-4.14", false, false, false},
      {"perf.data.piped.target-3.4", false, false, false},
      {"perf.data.piped.target-3.8", false, false, false},
      {"perf.data.piped.target.throttled-3.4", false, false, false},
      {"perf.data.proc.map.timeout-3.18", false, false, false},
      {"perf.data.raw-3.4", false, false, false},
      {"perf.data.raw_callgraph_branch-3.4", true, false, false},
      {"perf.data.remmap-3.2", false, false, false},
      {"perf.data.singleprocess-3.4", false, false, false},
      {"perf.data.singleprocess-3.8", false, false, false},
      {"perf.data.systemwide.0-3.4", false, false, false},
      {"perf.data.systemwide.0-3.8", false, false, false},
      {"perf.data.systemwide.1-3.4", false, false, false},
      {"perf.data.systemwide.1-3.8", false, false, false},
      {"perf.data.systemwide.5-3.8", false, false, false},
      {"perf.data.throttle-3.8", false, false, false},
  };
  return kFiles;
}

std::vector<std::string> recorded_perf_data_names(bool branch_stacks_only) {
  std::vector<std::string> names;
  for (const auto& f : recorded_perf_data())
    if (!branch_stacks_only || f.branch_stack) names.push_back(f.name);
  return names;
}

std::filesystem::path recorded_perf_data_path(const std::string& name) {
  return recorded_perf_data_dir() / name;
}

std::string recorded_perf_data_test_name(const std::string& file_name) {
  std::string n = file_name;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

}  // namespace profcollect::test
