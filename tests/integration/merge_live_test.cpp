// `profcollect merge` of three live collections of one binary, as three hosts would send them:
// live_spin run in spin_a, spin_b and spin_a again (so the inputs differ in which functions and
// addresses hold samples, and in their time ranges). Judged by independent tools and by the
// test's own readers of the inputs:
// - bolt.fdata is no_lbr here, which BOLT's merge-fdata refuses: every merged line must be the
//   sum of that line over the three inputs (counted by convert_judges' reader), the header the
//   inputs' event, and llvm-bolt-19 must accept the merged file and find profiled functions.
// - autofdo.prof must equal `llvm-profdata-19 merge --sample --text` of the three inputs. The
//   fair comparison is of content, not of layout, so ours is also passed alone through the same
//   llvm-profdata command (which adds nothing to a single profile) and the two texts compared;
//   then ours must equal llvm-profdata's text as written too (same order of functions, lines and
//   call targets), so a build machine's `clang -fprofile-sample-use` sees the same file.
// - bolt.inferred.preagg is made again from the summed IP samples, and llvm-bolt-19 takes it.
// - samples.ip: per-address sums; meta.json: samples summed, first_sample_ns the earliest,
//   last_sample_ns the latest, events the union; `profcollect report` reads the result.
#include <gtest/gtest.h>

#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/live_support.h"
#include "tests/integration/merge_judges.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class MergeLiveTest : public LiveFixtureTest {};

TEST_F(MergeLiveTest, ThreeHostsAddUpAsMergeToolsAddThem) {
  if (!have_executable("llvm-profdata-19"))
    GTEST_SKIP() << "llvm-profdata-19"
                 << " is not installed";
  if (!have_executable("llvm-bolt-19"))
    GTEST_SKIP() << "llvm-bolt-19"
                 << " is not installed";
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  std::vector<fs::path> hosts;
  for (const char* mode : {"a", "b", "a"}) {
    const fs::path out = tmp / ("host" + std::to_string(hosts.size() + 1));
    const ProfcollectRun run = run_profcollect(
        {"-q", "-o", out.string(), "--binary", spin.string(), "--", spin.string(), mode, "1"});
    ASSERT_EQ(run.run.exit_code, 0) << run.describe();
    hosts.push_back(out);
  }
  std::vector<fs::path> inputs;  // the binary's directory of each host
  std::vector<json> metas;
  for (const auto& host : hosts) {
    inputs.push_back(only_binary_dir(host, "live_spin"));
    metas.push_back(read_json_file(inputs.back() / "meta.json"));
    ASSERT_FALSE(metas.back().is_discarded()) << inputs.back();
    ASSERT_EQ(metas.back().at("bolt_fdata"), "no_lbr") << inputs.back();
    ASSERT_TRUE(fs::exists(inputs.back() / "autofdo.prof"))
        << inputs.back() << " has no AutoFDO profile";
  }

  const fs::path merged_out = tmp / "merged";
  const ProfcollectRun merge = run_merge(merged_out, hosts);
  ASSERT_EQ(merge.run.exit_code, 0) << merge.describe();
  const fs::path merged = only_binary_dir(merged_out, "live_spin");
  EXPECT_EQ(merged.filename(), inputs.front().filename());

  // bolt.fdata: per-line sums, the inputs' header; llvm-bolt accepts it.
  const NoLbrFdata ours = parse_no_lbr_fdata(read_file(merged / "bolt.fdata"));
  EXPECT_TRUE(ours.malformed_lines.empty()) << ours.malformed_lines.front();
  EXPECT_EQ(ours.header, parse_no_lbr_fdata(read_file(inputs.front() / "bolt.fdata")).header);
  std::vector<fs::path> fdatas;
  for (const auto& input : inputs) fdatas.push_back(input / "bolt.fdata");
  const NamedSiteCounts expected_sites = summed_no_lbr(fdatas);
  EXPECT_EQ(ours.counts, expected_sites);
  const BoltRun bolt = run_llvm_bolt(spin, merged / "bolt.fdata", tmp / "live_spin.bolt");
  EXPECT_EQ(bolt.run.exit_code, 0) << bolt.run.describe(bolt.argv);
  EXPECT_GT(bolt.profiled_functions.value_or(0), 0u) << bolt.run.describe(bolt.argv);

  // bolt.inferred.preagg: inferred again from the summed samples (inference does not add up),
  // with the binary at meta.json's path; llvm-bolt takes it.
  ASSERT_TRUE(fs::exists(merged / "bolt.inferred.preagg"));
  const BoltRun inferred =
      run_llvm_bolt(spin, merged / "bolt.inferred.preagg", tmp / "live_spin.inferred.bolt", true);
  EXPECT_EQ(inferred.run.exit_code, 0) << inferred.run.describe(inferred.argv);
  EXPECT_GT(inferred.profiled_functions.value_or(0), 0u) << inferred.run.describe(inferred.argv);

  // autofdo.prof against llvm-profdata's merge of the three.
  std::vector<fs::path> profiles;
  for (const auto& input : inputs) profiles.push_back(input / "autofdo.prof");
  const std::string reference = llvm_profdata_merge(profiles, tmp / "reference.prof");
  ASSERT_FALSE(reference.empty());
  const std::string normalized =
      llvm_profdata_merge({merged / "autofdo.prof"}, tmp / "ours.normalized.prof");
  EXPECT_EQ(normalized, reference) << profile_difference(normalized, reference);
  const std::string as_written = read_file(merged / "autofdo.prof");
  EXPECT_EQ(as_written, reference) << profile_difference(as_written, reference);

  // samples.ip: per-address sums.
  std::map<uint64_t, uint64_t> expected_ips;
  for (const auto& input : inputs) {
    for (const auto& [address, count] : read_ip_samples(input / "samples.ip"))
      expected_ips[address] += count;
  }
  EXPECT_EQ(read_ip_samples(merged / "samples.ip"), expected_ips);

  // meta.json: samples summed, the time range widened, the schema kept.
  const json meta = read_json_file(merged / "meta.json");
  ASSERT_FALSE(meta.is_discarded());
  const ExpectedMeta want = expected_meta(metas);
  EXPECT_EQ(meta.at("samples").get<uint64_t>(), want.samples);
  EXPECT_EQ(meta.at("first_sample_ns").get<uint64_t>(), want.first_sample_ns);
  EXPECT_EQ(meta.at("last_sample_ns").get<uint64_t>(), want.last_sample_ns);
  EXPECT_LT(want.first_sample_ns, metas.back().at("first_sample_ns").get<uint64_t>())
      << "the runs did not follow each other";
  EXPECT_EQ(meta.at("events").get<std::vector<std::string>>(), want.events);
  EXPECT_EQ(meta.at("build_id"), metas.front().at("build_id"));
  EXPECT_EQ(meta.at("path"), metas.front().at("path"));
  EXPECT_EQ(meta.at("bolt_fdata"), "no_lbr");
  std::vector<std::string> keys, input_keys;
  for (const auto& [key, value] : meta.items()) keys.push_back(key);
  for (const auto& [key, value] : metas.front().items()) input_keys.push_back(key);
  EXPECT_EQ(keys, input_keys) << "meta.json's schema";
  EXPECT_EQ(meta.at("formats"), metas.front().at("formats"));
  uint64_t fdata_total = 0;
  for (const auto& [site, count] : expected_sites) fdata_total += count;
  EXPECT_LE(fdata_total, want.samples);

  const ProfcollectRun report = run_profcollect({"report", merged_out.string()});
  EXPECT_EQ(report.run.exit_code, 0) << report.describe();
}

}  // namespace
}  // namespace profcollect::test
