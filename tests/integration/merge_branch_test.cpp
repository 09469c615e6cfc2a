// `profcollect merge` of three collections with branch stacks of one binary, as three hosts with
// LBR would send them. This machine has no LBR: each "host" is branch_recorder's real execution
// of branch_loop (ptrace single-stepping), recorded here with a different sampling period so
// that the three differ, and collected by live collection's session replaying the recording
// (tests/integration/replay_session.h) into its own output directory. Judged by:
// - bolt.fdata (branch fdata): equal, as a multiset of lines, to BOLT's merge-fdata of the
//   three inputs' bolt.fdata;
// - bolt.nolbr.fdata (the IP samples' no_lbr profile, which merge-fdata refuses) and bolt.preagg:
//   every line the sum of that line over the inputs, as the test reads them;
// - autofdo.prof (made from branch ranges): equal to `llvm-profdata-19 merge --sample --text` of
//   the three, ours first passed alone through the same command (content, not layout, is
//   compared; merge_live_test.cpp says why), and then as written;
// - meta.json: samples and branch_stacks summed, bolt_fdata still "branch".
#include <gtest/gtest.h>

#include <sstream>

#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/branch_fixtures.h"
#include "tests/integration/live_support.h"
#include "tests/integration/merge_judges.h"
#include "tests/integration/replay_session.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
const char* const kMergeFdata = "/usr/lib/llvm-19/bin/merge-fdata";

// bolt.preagg lines summed per record ("B from to" counts and mispredicts, "F|f start end").
std::map<std::string, std::pair<uint64_t, uint64_t>> summed_preagg(
    const std::vector<fs::path>& files) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> sum;
  for (const auto& file : files) {
    for (const std::string& line : split_lines(read_file(file))) {
      std::istringstream in(line);
      std::vector<std::string> f;
      for (std::string w; in >> w;) f.push_back(w);
      const bool branch = f.size() == 5 && f[0] == "B";
      const bool range = f.size() == 4 && (f[0] == "F" || f[0] == "f");
      EXPECT_TRUE(branch || range) << file << ": malformed line '" << line << "'";
      if (!branch && !range) continue;
      auto& counts = sum[f[0] + " " + f[1] + " " + f[2]];
      counts.first += std::stoull(f[3]);
      if (branch) counts.second += std::stoull(f[4]);
    }
  }
  return sum;
}

class MergeBranchTest : public BranchFixtureTest {};

TEST_F(MergeBranchTest, ThreeHostsAddUpAsMergeFdataAndLlvmProfdataAddThem) {
  if (!have_executable(kMergeFdata)) GTEST_SKIP() << kMergeFdata << " is not installed";
  if (!have_executable("llvm-profdata-19"))
    GTEST_SKIP() << "llvm-profdata-19"
                 << " is not installed";
  const fs::path binary = fixture("branch_loop");
  TempDir tmp;
  std::vector<fs::path> hosts, inputs;
  std::vector<json> metas;
  for (const char* period : {"29", "37", "43"}) {
    const fs::path data = tmp / (std::string("period") + period + ".data");
    const std::vector<std::string> record = {PROFCOLLECT_BRANCH_RECORDER,
                                             "--entries",
                                             "32",
                                             "--period",
                                             period,
                                             "--max-steps",
                                             "60000",
                                             "-o",
                                             data.string(),
                                             "--",
                                             binary.string()};
    const CommandResult recorded = run_command(record);
    ASSERT_EQ(recorded.exit_code, 0) << recorded.describe(record);
    hosts.push_back(tmp / (std::string("host") + period));
    const ReplayResult replay = replay_into(data, hosts.back(), {binary.string()});
    ASSERT_GT(replay.counts.branch_stacks, 10u) << data << " holds too few branch stacks";
    for (const auto& w : replay.warnings) ADD_FAILURE() << w;
    inputs.push_back(only_binary_dir(hosts.back(), "branch_loop"));
    metas.push_back(read_json_file(inputs.back() / "meta.json"));
    ASSERT_EQ(metas.back().value("bolt_fdata", std::string()), "branch") << inputs.back();
    for (const char* file : {"bolt.fdata", "bolt.nolbr.fdata", "bolt.preagg", "autofdo.prof"}) {
      ASSERT_TRUE(fs::exists(inputs.back() / file)) << inputs.back() << " has no " << file;
    }
  }
  EXPECT_NE(read_file(inputs[0] / "bolt.fdata"), read_file(inputs[1] / "bolt.fdata"))
      << "the hosts do not differ";

  const fs::path merged_out = tmp / "merged";
  const ProfcollectRun merge = run_merge(merged_out, hosts);
  ASSERT_EQ(merge.run.exit_code, 0) << merge.describe();
  const fs::path merged = only_binary_dir(merged_out, "branch_loop");

  // bolt.fdata against merge-fdata.
  std::vector<std::string> merge_fdata = {kMergeFdata};
  for (const auto& input : inputs) merge_fdata.push_back((input / "bolt.fdata").string());
  const CommandResult reference = run_command(merge_fdata);
  ASSERT_EQ(reference.exit_code, 0) << reference.describe(merge_fdata);
  const std::vector<std::string> want = sorted_lines(reference.out),
                                 got = sorted_lines(read_file(merged / "bolt.fdata"));
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(got, want) << line_differences(want, got);

  // bolt.nolbr.fdata and bolt.preagg: per-line sums.
  std::vector<fs::path> nolbr, preagg, profiles;
  for (const auto& input : inputs) {
    nolbr.push_back(input / "bolt.nolbr.fdata");
    preagg.push_back(input / "bolt.preagg");
    profiles.push_back(input / "autofdo.prof");
  }
  const NoLbrFdata ours_nolbr = parse_no_lbr_fdata(read_file(merged / "bolt.nolbr.fdata"));
  EXPECT_TRUE(ours_nolbr.malformed_lines.empty());
  EXPECT_EQ(ours_nolbr.header, parse_no_lbr_fdata(read_file(nolbr.front())).header);
  EXPECT_EQ(ours_nolbr.counts, summed_no_lbr(nolbr));
  EXPECT_EQ(summed_preagg({merged / "bolt.preagg"}), summed_preagg(preagg));

  // autofdo.prof against llvm-profdata.
  const std::string llvm = llvm_profdata_merge(profiles, tmp / "reference.prof");
  ASSERT_FALSE(llvm.empty());
  const std::string normalized =
      llvm_profdata_merge({merged / "autofdo.prof"}, tmp / "ours.normalized.prof");
  EXPECT_EQ(normalized, llvm) << profile_difference(normalized, llvm);
  const std::string as_written = read_file(merged / "autofdo.prof");
  EXPECT_EQ(as_written, llvm) << profile_difference(as_written, llvm);

  // meta.json.
  const json meta = read_json_file(merged / "meta.json");
  const ExpectedMeta expected = expected_meta(metas);
  EXPECT_EQ(meta.at("samples").get<uint64_t>(), expected.samples);
  EXPECT_EQ(meta.at("branch_stacks").get<uint64_t>(), expected.branch_stacks);
  EXPECT_EQ(meta.at("first_sample_ns").get<uint64_t>(), expected.first_sample_ns);
  EXPECT_EQ(meta.at("last_sample_ns").get<uint64_t>(), expected.last_sample_ns);
  EXPECT_EQ(meta.at("bolt_fdata"), "branch");
  EXPECT_EQ(meta.at("formats"), metas.front().at("formats"));
}

}  // namespace
}  // namespace profcollect::test
