// Live collection's per-binary aggregation (the collection session replaying a recording, what `profcollect
// --pid/-a/-- CMD` runs on every sample) fed the branch-stack perf.data files recorded from real
// executions: this machine has no LBR, so the records come from the recordings instead of the
// ring buffer, through the same process table. Judged by perf2bolt 19 and llvm-profgen-19 on the
// same files: the live directory's bolt.fdata equals perf2bolt's fdata, its bolt.preagg through
// `perf2bolt --pa` gives that fdata too, its autofdo.prof equals `llvm-profgen --perfdata`, and a
// second run adds up (every count doubles).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/branch_fixtures.h"
#include "tests/integration/convert_judges.h"
#include "tests/integration/replay_session.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
const char* const kPerf2Bolt = "/usr/lib/llvm-19/bin/perf2bolt";

// One "run" of live collection over the recording, written to `out`: the live session, its
// pipeline, store and renderer, replaying the recording instead of reading ring buffers.
void collect_into(const fs::path& data, const fs::path& binary, const fs::path& out) {
  ReplayResult r = replay_into(data, out, {binary.string()});
  ASSERT_GT(r.counts.branch_stacks, 10u) << data << " holds too few branch stacks";
  for (const auto& w : r.warnings) ADD_FAILURE() << w;
}

// The binary's directory in a live output directory (the only one).
fs::path binary_dir_in(const fs::path& out) {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(out)) {
    if (e.is_directory()) dirs.push_back(e.path());
  }
  EXPECT_EQ(dirs.size(), 1u) << out;
  return dirs.empty() ? out : dirs.front();
}

// fdata lines with every count (the last two fields: mispredicts, count) multiplied.
std::vector<std::string> scaled(const std::vector<std::string>& lines, uint64_t factor) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    std::istringstream in(line);
    std::vector<std::string> f;
    std::string w;
    while (in >> w) f.push_back(w);
    if (f.size() != 8) {
      out.push_back(line);
      continue;
    }
    f[6] = std::to_string(std::stoull(f[6]) * factor);
    f[7] = std::to_string(std::stoull(f[7]) * factor);
    std::string joined;
    for (size_t i = 0; i < f.size(); ++i) joined += (i ? " " : "") + f[i];
    out.push_back(joined);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class LiveBranchProfiles : public BranchFixtureTest,
                           public ::testing::WithParamInterface<BranchCase> {};

TEST_P(LiveBranchProfiles, EqualPerf2boltAndLlvmProfgenAndAddUp) {
  if (!have_executable(kPerf2Bolt)) GTEST_SKIP() << kPerf2Bolt << " is not installed";
  const auto& c = GetParam();
  TempDir dir;
  const fs::path data = fixture(c.data), bin = fixture(c.binary), out = dir / "live";
  ASSERT_NO_FATAL_FAILURE(collect_into(data, bin, out));
  const fs::path bdir = binary_dir_in(out);

  auto meta = nlohmann::json::parse(read_file(bdir / "meta.json"));
  EXPECT_EQ(meta.value("bolt_fdata", std::string()), "branch");
  EXPECT_EQ(meta.value("path", std::string()), bin.string());

  // BOLT: fdata and pre-aggregated, judged by perf2bolt on the recording.
  const fs::path ref = dir / "ref.fdata", via_pa = dir / "pa.fdata";
  std::vector<std::string> judge = {kPerf2Bolt, "-p",         data.string(),
                                    "-o",       ref.string(), bin.string()};
  auto j = run_command(judge, {.cwd = dir.path()});
  ASSERT_EQ(j.exit_code, 0) << j.describe(judge);
  const auto ref_lines = sorted_lines(read_file(ref));
  ASSERT_GT(ref_lines.size(), 3u) << "perf2bolt found too little to compare";
  EXPECT_EQ(sorted_lines(read_file(bdir / "bolt.fdata")), ref_lines)
      << line_differences(ref_lines, sorted_lines(read_file(bdir / "bolt.fdata")));
  std::vector<std::string> judge_pa = {
      kPerf2Bolt, "--pa",          "-p",        (bdir / "bolt.preagg").string(),
      "-o",       via_pa.string(), bin.string()};
  auto jp = run_command(judge_pa, {.cwd = dir.path()});
  ASSERT_EQ(jp.exit_code, 0) << jp.describe(judge_pa);
  EXPECT_EQ(sorted_lines(read_file(via_pa)), ref_lines);

  // AutoFDO from the branch ranges, judged by llvm-profgen on the recording.
  std::string reference =
      run_llvm_profgen({"--perfdata=" + data.string(), "--binary=" + bin.string()}, dir.path());
  ASSERT_FALSE(reference.empty());
  ASSERT_TRUE(fs::exists(bdir / "autofdo.prof"));
  std::string ours = normalize_profile(read_file(bdir / "autofdo.prof"), dir.path());
  std::string theirs = normalize_profile(reference, dir.path());
  EXPECT_EQ(profile_difference(ours, theirs), "");

  // `profcollect report` reads the branch directory: IP samples from bolt.nolbr.fdata, the stacks.
  std::vector<std::string> report = {profcollect_exe().string(), "report", "--json", out.string()};
  auto rr = run_command(report);
  ASSERT_EQ(rr.exit_code, 0) << rr.describe(report);
  auto rj = nlohmann::json::parse(rr.out, nullptr, false);
  ASSERT_TRUE(rj.is_object()) << rr.out;
  ASSERT_EQ(rj["binaries"].size(), 1u) << rr.out;
  EXPECT_EQ(rj["binaries"][0].value("branch_stacks", uint64_t{0}),
            meta.value("branch_stacks", uint64_t{0}));
  EXPECT_GT(rj["binaries"][0].value("fdata_samples", uint64_t{0}), 0u) << rr.out;
  EXPECT_LE(rj["binaries"][0].value("fdata_samples", uint64_t{0}),
            meta.value("samples", uint64_t{0}))
      << rr.out;

  // A second run over the same recording adds to the first: perf2bolt's counts doubled.
  const uint64_t stacks_once = meta.value("branch_stacks", uint64_t{0});
  ASSERT_GT(stacks_once, 0u);
  ASSERT_NO_FATAL_FAILURE(collect_into(data, bin, out));
  EXPECT_EQ(sorted_lines(read_file(bdir / "bolt.fdata")), scaled(ref_lines, 2));
  auto meta2 = nlohmann::json::parse(read_file(bdir / "meta.json"));
  EXPECT_EQ(meta2.value("branch_stacks", uint64_t{0}), 2 * stacks_once);
  // llvm-profgen on the recording twice over (its perf script output concatenated) is the judge
  // of the doubled AutoFDO profile.
  const fs::path script = dir / "twice.script";
  auto ps = run_command(
      {"perf", "script", "-F", "ip,brstack", "--show-mmap-events", "-i", data.string()});
  ASSERT_EQ(ps.exit_code, 0) << ps.err;
  write_file(script, ps.out + ps.out);
  std::string twice =
      run_llvm_profgen({"--perfscript=" + script.string(), "--binary=" + bin.string()}, dir.path());
  ASSERT_FALSE(twice.empty());
  EXPECT_EQ(profile_difference(normalize_profile(read_file(bdir / "autofdo.prof"), dir.path()),
                               normalize_profile(twice, dir.path())),
            "");
}

INSTANTIATE_TEST_SUITE_P(Programs, LiveBranchProfiles, ::testing::ValuesIn(branch_cases()),
                         branch_case_name);

}  // namespace
}  // namespace profcollect::test
