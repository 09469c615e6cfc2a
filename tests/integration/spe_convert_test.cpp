// profcollect convert on an Arm SPE perf.data with the arm64 test program (cross-built with
// clang-19 and lld): profiles judged by tools profcollect did not write.
// - AutoFDO from the SPE IP samples = llvm-profgen-19 --leading-ip-only on perf 6.1's
//   `--itrace=i1i` samples of the same file (the oracles.md recipe);
// - the pre-aggregated profile's branches = the taken branch records perf's dump prints, one
//   edge per record with its MISPRED count, returns left out as BOLT 19 does, no fall-through;
// - the no_lbr profile counts every perf sample in the binary once;
// - llvm-bolt-19 reads the branch fdata and profiles every function, and perf2bolt 19 makes the
//   same fdata of the pre-aggregated branches.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/convert_judges.h"
#include "tests/integration/spe_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

class SpeConvert : public SpeFixtureTest {
 protected:
  void SetUp() override {
    SpeFixtureTest::SetUp();
    for (const char* tool :
         {"perf", "llvm-profgen-19", "llvm-profdata-19", "llvm-bolt-19", "llvm-objdump-19"}) {
      if (!have_executable(tool)) GTEST_SKIP() << tool << " not found";
    }
  }
  CommandResult convert(const std::string& formats, const std::filesystem::path& out,
                        std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {profcollect_exe().string(),
                                     "convert",
                                     "-q",
                                     "-p",
                                     fixture("spe_loop.data").string(),
                                     "--format",
                                     formats,
                                     "-o",
                                     out.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(fixture("spe_loop").string());
    CommandResult r = run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
    return r;
  }
  static std::string perf_itrace(const std::string& fields, bool mmaps) {
    std::vector<std::string> argv = {
        "perf", "script", "-i", fixture("spe_loop.data").string(), "--itrace=i1i", "-F", fields};
    if (mmaps) argv.push_back("--show-mmap-events");
    const CommandResult r = run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
    return r.out;
  }
  TempDir tmp_;
};

TEST_F(SpeConvert, AutofdoMatchesLlvmProfgenOnPerfInstructionSamples) {
  convert("autofdo", tmp_ / "ours.prof");
  // Each sample line gets a dummy branch entry: llvm-profgen reads branch-stack text only.
  std::string script;
  for (const std::string& l : split_lines(perf_itrace("ip,brstack", true))) {
    std::istringstream in(l);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (l.find("PERF_RECORD_MMAP") != std::string::npos || words.size() != 1) {
      script += l + "\n";
    } else {
      script += l + " 0x0/0x0/P/-/-/0\n";
    }
  }
  write_file(tmp_ / "ip.perfscript", script);
  const std::vector<std::string> profgen = {"llvm-profgen-19",
                                            "--perfscript=" + (tmp_ / "ip.perfscript").string(),
                                            "--binary=" + fixture("spe_loop").string(),
                                            "--leading-ip-only",
                                            "--format=text",
                                            "-o",
                                            (tmp_ / "ref.prof").string()};
  const CommandResult g = run_command(profgen);
  ASSERT_EQ(g.exit_code, 0) << g.describe(profgen);
  for (const char* name : {"ours", "ref"}) {
    const std::vector<std::string> merge = {"llvm-profdata-19",
                                            "merge",
                                            "--sample",
                                            "--text",
                                            (tmp_ / (std::string(name) + ".prof")).string(),
                                            "-o",
                                            (tmp_ / (std::string(name) + ".txt")).string()};
    const CommandResult m = run_command(merge);
    ASSERT_EQ(m.exit_code, 0) << m.describe(merge);
  }
  const std::string ours = read_file(tmp_ / "ours.txt");
  EXPECT_NE(ours.find("spe_work:"), std::string::npos);
  EXPECT_EQ(ours, read_file(tmp_ / "ref.txt"));
}

TEST_F(SpeConvert, PreaggBranchesAreTheTakenBranchRecords) {
  convert("preagg", tmp_ / "ours.preagg");
  // Returns, from the disassembly: BOLT 19 does not count a return as a branch.
  const CommandResult objdump =
      run_command({"llvm-objdump-19", "-d", fixture("spe_loop").string()});
  ASSERT_EQ(objdump.exit_code, 0);
  std::set<uint64_t> returns;
  static const std::regex ret_line(R"(^\s*([0-9a-f]+):\s+[0-9a-f]{8}\s+ret\b.*)");
  for (const std::string& l : split_lines(objdump.out)) {
    std::smatch m;
    if (std::regex_match(l, m, ret_line)) returns.insert(std::stoull(m[1], nullptr, 16));
  }
  ASSERT_FALSE(returns.empty());

  // perf's dump: per record the PC, the operation, the target and the events.
  std::map<std::pair<uint64_t, uint64_t>, std::pair<uint64_t, uint64_t>>
      expected;  // edge -> count, mispreds
  for (const PerfDumpTakenBranch& t : perf_dump_taken_branches(fixture("spe_loop.data"))) {
    if (returns.count(t.pc)) continue;
    auto& e = expected[{t.pc, t.target}];
    ++e.first;
    e.second += t.mispredicted;
  }
  ASSERT_GT(expected.size(), 3u);

  std::map<std::pair<uint64_t, uint64_t>, std::pair<uint64_t, uint64_t>> ours;
  for (const std::string& l : split_lines(read_file(tmp_ / "ours.preagg"))) {
    std::istringstream in(l);
    std::string kind, from, to;
    uint64_t count = 0, mispreds = 0;
    in >> kind >> from >> to >> count >> mispreds;
    ASSERT_EQ(kind, "B") << "one edge per SPE record, no fall-through: " << l;
    ours[{std::stoull(from, nullptr, 16), std::stoull(to, nullptr, 16)}] = {count, mispreds};
  }
  EXPECT_EQ(ours, expected);
}

TEST_F(SpeConvert, NoLbrCountsEverySampleInTheBinaryOnce) {
  convert("bolt", tmp_ / "nolbr.fdata", {"--nl"});
  // The binary's executable mapping, from perf's MMAP2 line: [start(len) ...
  const std::string script = perf_itrace("ip", true);
  static const std::regex mmap(
      R"(PERF_RECORD_MMAP2 .*\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) .*spe_loop$)");
  uint64_t start = 0, len = 0, in_binary = 0;
  for (const std::string& l : split_lines(script)) {
    std::smatch m;
    if (std::regex_search(l, m, mmap)) {
      start = std::stoull(m[1], nullptr, 16);
      len = std::stoull(m[2], nullptr, 16);
      continue;
    }
    std::istringstream in(l);
    std::string ip;
    if (in >> ip && ip.find_first_not_of("0123456789abcdef") == std::string::npos) {
      const uint64_t a = std::stoull(ip, nullptr, 16);
      in_binary += a >= start && a - start < len;
    }
  }
  ASSERT_GT(len, 0u);
  const std::vector<std::string> lines = split_lines(read_file(tmp_ / "nolbr.fdata"));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "no_lbr arm_spe_0//:");
  uint64_t total = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::istringstream in(lines[i]);
    std::string k, func, off;
    uint64_t count = 0;
    in >> k >> func >> off >> count;
    total += count;
  }
  EXPECT_GT(in_binary, 1000u);
  EXPECT_EQ(total, in_binary);
}

TEST_F(SpeConvert, LlvmBoltReadsTheBranchFdata) {
  convert("bolt", tmp_ / "ours.fdata");
  const std::string first = split_lines(read_file(tmp_ / "ours.fdata")).at(0);
  EXPECT_TRUE(first.starts_with("1 ")) << "a branch profile: " << first;
  const std::vector<std::string> argv = {"llvm-bolt-19", fixture("spe_loop").string(), "-o",
                                         (tmp_ / "spe_loop.bolt").string(),
                                         "-data=" + (tmp_ / "ours.fdata").string()};
  const CommandResult bolt = run_command(argv);
  ASSERT_EQ(bolt.exit_code, 0) << bolt.describe(argv);
  EXPECT_NE(
      (bolt.out + bolt.err)
          .find("3 out of 3 functions in the binary (100.0%) have non-empty execution profile"),
      std::string::npos)
      << bolt.out << bolt.err;
}

// What the recording's SPE data came to, in report --json and convert's summary: the records and
// taken branches perf decodes (one --itrace=i1i sample per record with a PC, one taken-branch
// record of perf's dump per edge), and the PERF_RECORD_AUX records perf's dump lists with their
// sizes and flags (the fixture flags its last one PARTIAL and COLLISION).
TEST_F(SpeConvert, TheSummaryCountsPerfsRecordsAndTheAuxFlagsOfPerfsDump) {
  const std::string samples = perf_itrace("ip", false);
  uint64_t perf_records = 0;
  for (const std::string& l : split_lines(samples)) perf_records += !l.empty();
  const uint64_t perf_taken = perf_dump_taken_branches(fixture("spe_loop.data")).size();

  const std::vector<std::string> dump_argv = {"perf", "report", "-D", "-i",
                                              fixture("spe_loop.data").string()};
  const CommandResult dump = run_command(dump_argv);
  ASSERT_EQ(dump.exit_code, 0) << dump.describe(dump_argv);
  static const std::regex fields(
      R"(PERF_RECORD_AUX offset: (0x[0-9a-f]+|0) size: (0x[0-9a-f]+|0) flags: (0x[0-9a-f]+|0) )");
  uint64_t records = 0, bytes = 0, partial = 0, collisions = 0, truncated = 0;
  for (const std::string& l : split_lines(dump.out)) {
    std::smatch m;
    if (!std::regex_search(l, m, fields)) continue;
    ++records;
    bytes += std::stoull(m[2], nullptr, 16);
    const uint64_t flags = std::stoull(m[3], nullptr, 16);
    truncated += (flags & 1) != 0;
    partial += (flags & 4) != 0;
    collisions += (flags & 8) != 0;
  }
  ASSERT_EQ(records, 2u) << "the fixture's two AUX records";
  ASSERT_EQ(partial + collisions, 2u) << "the fixture flags its last one";

  const std::vector<std::string> argv = {profcollect_exe().string(), "report", "--json",
                                         fixture("spe_loop.data").string()};
  const CommandResult report = run_command(argv);
  ASSERT_EQ(report.exit_code, 0) << report.describe(argv);
  const nlohmann::json j = nlohmann::json::parse(report.out, nullptr, false);
  ASSERT_TRUE(j.is_object() && j.contains("arm_spe")) << report.out;
  const nlohmann::json& a = j["arm_spe"];
  EXPECT_EQ(a["records"].get<uint64_t>(), perf_records + a["records_without_pc"].get<uint64_t>())
      << a;
  EXPECT_EQ(a["taken_branches"].get<uint64_t>(), perf_taken) << a;
  EXPECT_EQ(a["records_dropped"].get<uint64_t>(), 0u) << a;
  EXPECT_EQ(a["aux_records"].get<uint64_t>(), records) << a;
  EXPECT_EQ(a["aux_bytes"].get<uint64_t>(), bytes) << a;
  EXPECT_EQ(a["aux_truncated"].get<uint64_t>(), truncated) << a;
  EXPECT_EQ(a["aux_partial"].get<uint64_t>(), partial) << a;
  EXPECT_EQ(a["aux_collisions"].get<uint64_t>(), collisions) << a;

  const std::vector<std::string> convert_argv = {profcollect_exe().string(),
                                                 "convert",
                                                 "-p",
                                                 fixture("spe_loop.data").string(),
                                                 "--format",
                                                 "autofdo",
                                                 "-o",
                                                 (tmp_ / "out.afdo").string(),
                                                 fixture("spe_loop").string()};
  const CommandResult converted = run_command(convert_argv);
  ASSERT_EQ(converted.exit_code, 0) << converted.describe(convert_argv);
  EXPECT_NE(converted.err.find("Arm SPE: " + std::to_string(a["records"].get<uint64_t>()) +
                               " records (" + std::to_string(perf_taken) + " taken branches)"),
            std::string::npos)
      << converted.err;
}

// The branch fdata's counts and offsets: perf2bolt 19 turns our pre-aggregated file (judged above
// against perf's dump) into the same fdata through its own AArch64 disassembly.
TEST_F(SpeConvert, BranchFdataIsPerf2boltsOfThePreaggregatedTakenBranches) {
  if (!have_executable(kPerf2Bolt)) GTEST_SKIP() << kPerf2Bolt << " not found";
  convert("bolt,preagg", tmp_ / "out");
  const std::vector<std::string> argv = {kPerf2Bolt,
                                         "--pa",
                                         "-p",
                                         (tmp_ / "out/bolt.preagg").string(),
                                         "-o",
                                         (tmp_ / "perf2bolt.fdata").string(),
                                         fixture("spe_loop").string()};
  const CommandResult run = run_command(argv);
  ASSERT_EQ(run.exit_code, 0) << run.describe(argv);
  std::vector<std::string> theirs = split_lines(read_file(tmp_ / "perf2bolt.fdata"));
  std::vector<std::string> ours = split_lines(read_file(tmp_ / "out/bolt.fdata"));
  std::erase(theirs, std::string());
  std::erase(ours, std::string());
  std::sort(theirs.begin(), theirs.end());
  std::sort(ours.begin(), ours.end());
  ASSERT_GT(theirs.size(), 3u) << run.describe(argv);
  EXPECT_EQ(ours, theirs);
}

}  // namespace
}  // namespace profcollect::test
