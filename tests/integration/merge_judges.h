// What the `profcollect merge` tests share: the independent tools that judge a merge (BOLT's
// merge-fdata, llvm-profdata-19) and the test's own readers of the per-host files, which share no
// code with profcollect's readers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/convert_judges.h"

namespace profcollect::test {

// `profcollect merge -o OUT INPUTS...`.
ProfcollectRun run_merge(const std::filesystem::path& out,
                         const std::vector<std::filesystem::path>& inputs);

// `llvm-profdata-19 merge --sample --text PROFILES... -o OUT`; the text written, or "" (with a
// test failure) when llvm-profdata refuses.
std::string llvm_profdata_merge(const std::vector<std::filesystem::path>& profiles,
                                const std::filesystem::path& out);

// "<hex address> <count>" lines of a samples.ip, summed per address; a malformed line fails the
// test.
std::map<uint64_t, uint64_t> read_ip_samples(const std::filesystem::path& path);

// The per-line sums of no_lbr fdata files as the test reads them (convert_judges' reader); a
// malformed line fails the test.
NamedSiteCounts summed_no_lbr(const std::vector<std::filesystem::path>& files);

// The single binary directory of `basename` in `out` (a test failure when not exactly one).
std::filesystem::path only_binary_dir(const std::filesystem::path& out,
                                      const std::string& basename);

// The numbers meta.json files must add up to: samples and branch_stacks summed, the earliest
// non-zero first_sample_ns, the latest last_sample_ns, events in the order first met.
struct ExpectedMeta {
  uint64_t samples = 0, branch_stacks = 0, first_sample_ns = 0, last_sample_ns = 0;
  std::vector<std::string> events;
};
ExpectedMeta expected_meta(const std::vector<nlohmann::json>& metas);

}  // namespace profcollect::test
