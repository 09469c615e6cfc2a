// Issue 24: `profcollect convert` on recordings of BOLTed binaries with BOLT address translation
// writes the input binary's profiles, judged by perf2bolt 19 where it can map the BOLTed binary
// (a non-PIE) and, for a BOLTed PIE (perf2bolt 19 follows one of its two executable segments and
// maps almost nothing), by the non-PIE build on the same input, by perf2bolt --pa on our
// pre-aggregated file of the BOLTed binary, and by the input binary's own profile.
#include <gtest/gtest.h>

#include <cmath>

#include "mapper/bolt_address_translation.h"
#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/bat_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
const char* const kPerf2Bolt = "/usr/lib/llvm-19/bin/perf2bolt";

class BatConvert : public BatFixtureTest {
 protected:
  // `profcollect convert -p DATA [EXTRA...] -o OUT BINARY`; fails the test unless it exits 0.
  static CommandResult convert(const fs::path& data, const fs::path& binary, const fs::path& out,
                               const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {profcollect_exe().string(), "convert", "-p", data.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"-o", out.string(), binary.string()});
    CommandResult r = run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
    return r;
  }
  // perf2bolt 19 on the same input (run where it can write its temporary files).
  static void perf2bolt(const std::vector<std::string>& args, const fs::path& cwd) {
    std::vector<std::string> argv = {kPerf2Bolt};
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult r = run_command(argv, {.cwd = cwd});
    ASSERT_EQ(r.exit_code, 0) << r.describe(argv);
  }
  void SetUp() override {
    BatFixtureTest::SetUp();
    if (!have_executable(kPerf2Bolt)) GTEST_SKIP() << kPerf2Bolt << " is not installed";
  }
};

TEST_F(BatConvert, NonPieBranchProfileEqualsPerf2boltsAndLlvmBoltTakesItForTheInputBinary) {
  TempDir dir;
  const fs::path ours = dir / "ours.fdata", theirs = dir / "perf2bolt.fdata";
  const fs::path data = fixture("bat_prog.bolt.branch.data"), bolted = fixture("bat_prog.bolt");
  const CommandResult r = convert(data, bolted, ours);
  EXPECT_NE(r.err.find("translated to the input binary"), std::string::npos) << r.err;
  perf2bolt({"-p", data.string(), "-o", theirs.string(), bolted.string()}, dir.path());

  const FdataFile a = read_fdata_file(ours), b = read_fdata_file(theirs);
  EXPECT_TRUE(a.bolted_collection) << "no boltedcollection line in " << ours;
  EXPECT_TRUE(b.bolted_collection);
  ASSERT_GT(b.lines.size(), 10u) << "perf2bolt wrote too little to judge";
  EXPECT_EQ(a.lines, b.lines);
  // The split function's cold path and the call to the secondary entry point are in it.
  EXPECT_TRUE(std::any_of(a.lines.begin(), a.lines.end(), [](const std::string& l) {
    return l.find(" 1 alt_entry 3 ") != std::string::npos;
  })) << "no edge to alt_entry's secondary entry point";

  const fs::path optimized = dir / "bat_prog.rebolt";
  const std::vector<std::string> bolt = {
      "llvm-bolt-19",     fixture("bat_prog").string(), "-o",
      optimized.string(), "-data=" + ours.string(),     "-reorder-blocks=ext-tsp"};
  const CommandResult run = run_command(bolt);
  ASSERT_EQ(run.exit_code, 0) << run.describe(bolt);
  EXPECT_NE(run.out.find("profile collection done on a binary already processed by BOLT"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("have non-empty execution profile"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("no valid profile data found"), std::string::npos) << run.out;
}

TEST_F(BatConvert, PieBranchProfileNamesTheNonPieBuildsFunctionsWithTotalsWithin5Percent) {
  TempDir dir;
  const fs::path pie = dir / "pie.fdata", non_pie = dir / "non_pie.fdata";
  convert(fixture("bat_prog_pie.bolt.branch.data"), fixture("bat_prog_pie.bolt"), pie);
  convert(fixture("bat_prog.bolt.branch.data"), fixture("bat_prog.bolt"), non_pie);
  const FdataFile a = read_fdata_file(pie), b = read_fdata_file(non_pie);
  EXPECT_TRUE(a.bolted_collection);
  std::set<std::string> names_a, names_b;
  for (const auto& [name, count] : a.per_function) names_a.insert(name);
  for (const auto& [name, count] : b.per_function) names_b.insert(name);
  EXPECT_EQ(names_a, names_b);
  ASSERT_TRUE(b.per_function.count("work") && b.per_function.count("alt_entry"));
  for (const auto& [name, count] : b.per_function) {
    if (count < 100) continue;  // a startup edge or two: not a share to judge
    const double theirs = static_cast<double>(count);
    const auto it = a.per_function.find(name);
    const double ours = it == a.per_function.end() ? 0.0 : static_cast<double>(it->second);
    EXPECT_LE(std::fabs(ours - theirs) / theirs, 0.05)
        << name << ": " << ours << " branches in the PIE's profile, " << theirs
        << " in the non-PIE's";
  }
}

// perf2bolt --pa reads pre-aggregated addresses as they are, with no mapping to follow: given the
// BOLTed binary it translates them through BAT, PIE or not. Our bolt.preagg keeps the BOLTed
// binary's addresses for that reason; what perf2bolt makes of it must be our fdata.
TEST_F(BatConvert, Perf2boltPaOnOurPreaggOfTheBoltedBinaryGivesOurFdata) {
  for (const std::string binary : {"bat_prog.bolt", "bat_prog_pie.bolt"}) {
    SCOPED_TRACE(binary);
    TempDir dir;
    const fs::path data = fixture(binary + ".branch.data"), bolted = fixture(binary);
    const fs::path ours = dir / "ours.fdata", preagg = dir / "ours.preagg", via = dir / "pa.fdata";
    convert(data, bolted, ours);
    convert(data, bolted, preagg, {"--format", "preagg"});
    perf2bolt({"--pa", "-p", preagg.string(), "-o", via.string(), bolted.string()}, dir.path());
    const FdataFile a = read_fdata_file(ours), b = read_fdata_file(via);
    ASSERT_GT(b.lines.size(), 10u);
    EXPECT_EQ(a.lines, b.lines);
  }
}

// perf2bolt 19 offsets a cold fragment's IP sample from the hot fragment's start
// (DataAggregator::doSample), which puts it past the end of the input function, and a sample on
// code BOLT added (a jump after a branch whose fall-through block it moved) at the distance from
// the branch, inside another input instruction, where ours is the start of the block the jump
// goes to (BoltAddressTranslation::translate). Those are its only lines off the input's
// instructions; ours hold every other line of perf2bolt's, all lie on the input function's
// instructions, and what they hold beyond perf2bolt's is what perf2bolt put off them. (Whether
// BOLT adds such a jump depends on the layout it chose: the PIE's has one, which the PIE test
// below reaches.) Judged on a cpu-clock recording and on
// a traced run sampled every 7 instructions, which reaches every instruction BOLT added.
TEST_F(BatConvert, NonPieIpProfileEqualsPerf2boltsButWhereItsOffsetsLeaveTheInstructions) {
  const auto symbols = nm_symbols(fixture("bat_prog"));
  const auto starts = instruction_starts(fixture("bat_prog"));
  for (const std::string name : {"bat_prog.bolt.ip.data", "bat_prog.bolt.steps.data"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    const fs::path data = fixture(name), bolted = fixture("bat_prog.bolt");
    const fs::path ours = dir / "ours.fdata", theirs = dir / "perf2bolt.fdata";
    convert(data, bolted, ours);
    perf2bolt({"-nl", "-p", data.string(), "-o", theirs.string(), bolted.string()}, dir.path());
    const FdataFile a = read_fdata_file(ours), b = read_fdata_file(theirs);
    EXPECT_TRUE(a.bolted_collection);
    EXPECT_EQ(a.no_lbr_header, b.no_lbr_header);
    EXPECT_EQ(a.total, b.total);
    // A stub of the PLT (a traced run steps through them) has no symbol; it is not translated.
    auto checked = [](const std::string& function) {
      return !function.ends_with("@PLT") && !function.starts_with("__BOLT_PSEUDO_");
    };
    uint64_t past_end = 0, inside_other = 0;  // perf2bolt's samples off the instructions
    for (const auto& [site, count] : b.samples) {
      if (!checked(site.first)) {
        EXPECT_EQ(a.samples.count(site) ? a.samples.at(site) : 0, count) << site.first;
        continue;
      }
      const std::string function = plain_name(site.first);
      ASSERT_TRUE(symbols.count(function)) << site.first << " is no symbol of the input binary";
      if (starts.at(function).count(site.second)) {
        EXPECT_GE(a.samples.count(site) ? a.samples.at(site) : 0, count)
            << site.first << "+0x" << std::hex << site.second << " lost samples";
      } else if (site.second >= symbols.at(function).second) {
        past_end += count;
      } else {
        inside_other += count;
      }
    }
    uint64_t more = 0;  // ours beyond perf2bolt's on the instructions: where its others went
    for (const auto& [site, count] : a.samples) {
      if (!checked(site.first)) continue;
      const std::string function = plain_name(site.first);
      ASSERT_TRUE(starts.count(function)) << site.first << " is no function of the input";
      EXPECT_TRUE(starts.at(function).count(site.second))
          << site.first << "+0x" << std::hex << site.second << " is no instruction start";
      const uint64_t theirs_here = b.samples.count(site) ? b.samples.at(site) : 0;
      if (count > theirs_here) more += count - theirs_here;
    }
    EXPECT_EQ(more, past_end + inside_other);
    EXPECT_GT(past_end, 0u) << "no cold-fragment samples: the fixture does not exercise them";
  }
}

// A BOLTed PIE: the translated profile against the input PIE's own profile of the same workload.
// The IP samples are a real execution's PC every 7 instructions (not cpu-clock: on a VM the
// shares of one binary's cpu-clock recordings move by 2-3 points from run to run), so the shares
// differ only where BOLT's layout changed the instructions executed. The run is short and its
// cold path frequent, so work (hot and cold fragments), alt_entry and rare all hold a good share.
TEST_F(BatConvert, PieIpProfileAgreesWithTheInputBinarysOwnWithinTwoPoints) {
  TempDir dir;
  const fs::path translated = dir / "bolted.fdata", own = dir / "own.fdata";
  convert(fixture("bat_prog_pie.bolt.steps.data"), fixture("bat_prog_pie.bolt"), translated);
  convert(fixture("bat_prog_pie.steps.data"), fixture("bat_prog_pie"), own);
  const FdataFile a = read_fdata_file(translated), b = read_fdata_file(own);
  EXPECT_TRUE(a.bolted_collection);
  EXPECT_FALSE(b.bolted_collection);
  ASSERT_GT(a.total, 20000u);
  ASSERT_GT(b.total, 20000u);
  std::map<std::string, uint64_t> shares_a, shares_b;
  for (const auto& [name, n] : a.per_function) shares_a[plain_name(name)] += n;
  for (const auto& [name, n] : b.per_function) shares_b[plain_name(name)] += n;
  std::set<std::string> names;
  for (const auto& m : {shares_a, shares_b})
    for (const auto& [name, n] : m) names.insert(name);
  for (const std::string& name : names) {
    const double pa = 100.0 * static_cast<double>(shares_a[name]) / static_cast<double>(a.total);
    const double pb = 100.0 * static_cast<double>(shares_b[name]) / static_cast<double>(b.total);
    EXPECT_LE(std::fabs(pa - pb), 2.0) << name << ": " << pa << "% vs " << pb << "%";
  }
  for (const char* name : {"work", "alt_entry", "rare"})
    EXPECT_GT(shares_b[name] * 20, b.total) << name << " holds less than 5% of the samples";
  const auto starts = instruction_starts(fixture("bat_prog_pie"));
  for (const auto& [site, count] : a.samples) {
    // A traced run steps through the PLT too; its stubs have no symbol to check against.
    if (site.first.ends_with("@PLT") || site.first.starts_with("__BOLT_PSEUDO_")) continue;
    ASSERT_TRUE(starts.count(plain_name(site.first))) << site.first << " is no function of nm's";
    const auto& code = starts.at(plain_name(site.first));
    EXPECT_TRUE(code.count(site.second))
        << site.first << "+0x" << std::hex << site.second << " is no instruction start";
  }
}

// The tables as llvm-bolt wrote them: the split function's cold fragment points at its hot part,
// and alt_entry's secondary entry is alt_entry_mid's offset in the input binary.
TEST_F(BatConvert, TablesHoldTheSplitFunctionAndTheSecondaryEntryPoint) {
  for (const std::string input : {"bat_prog", "bat_prog_pie"}) {
    SCOPED_TRACE(input);
    const auto elf = ElfBinary::open(fixture(input + ".bolt").string());
    const std::optional<BoltAddressTranslation> bat = BoltAddressTranslation::load(*elf);
    ASSERT_TRUE(bat);
    const auto bolted = nm_symbols(fixture(input + ".bolt"));
    const auto original = nm_symbols(fixture(input));
    // "BOLT-INFO: Wrote 5 BAT maps"
    const std::string log = read_file(fixture(input + ".bolt.log"));
    EXPECT_NE(log.find("Wrote " + std::to_string(bat->fragments().size()) + " BAT maps"),
              std::string::npos)
        << log;
    const BatFragment* work = bat->fragment(bolted.at("work").first);
    const BatFragment* cold = bat->fragment(bolted.at("work.cold.0").first);
    ASSERT_TRUE(work && cold);
    EXPECT_FALSE(work->cold);
    EXPECT_TRUE(cold->cold);
    EXPECT_EQ(cold->hot_address, work->address);
    const BatFragment* alt = bat->fragment(bolted.at("alt_entry").first);
    ASSERT_TRUE(alt);
    EXPECT_EQ(alt->secondary_entries, std::vector<uint64_t>{original.at("alt_entry_mid").first -
                                                            original.at("alt_entry").first});
    // Every translated offset of the cold fragment is an instruction of the input's work.
    const auto starts = instruction_starts(fixture(input));
    for (const BatEntry& e : cold->entries) EXPECT_TRUE(starts.at("work").count(e.input_offset));
  }
}

// AutoFDO profiles source lines, which BOLT does not change: from a BOLTed binary whose debug info
// BOLT updated (-update-debug-sections) it is the input's, and llvm-profgen on the BOLTed binary
// is the judge; without debug info (BOLT's default) convert says that BOLT removed it.
TEST_F(BatConvert, AutofdoOfABoltedBinaryWithUpdatedDebugInfoEqualsLlvmProfgens) {
  TempDir dir;
  const fs::path data = fixture("bat_prog_pie.dbg.bolt.ip.data");
  const fs::path bolted = fixture("bat_prog_pie.dbg.bolt"), ours = dir / "ours.prof";
  convert(data, bolted, ours, {"--format", "autofdo"});
  const fs::path script = dir / "ip.perfscript";
  write_file(script, ip_perf_script(data));
  const std::string reference = normalize_profile(
      run_llvm_profgen(
          {"--perfscript=" + script.string(), "--binary=" + bolted.string(), "--leading-ip-only"},
          dir.path()),
      dir.path());
  const std::string profile = normalize_profile(read_file(ours), dir.path());
  ASSERT_NE(profile.find("work:"), std::string::npos) << profile;
  EXPECT_EQ(profile_difference(profile, reference), "");

  const std::vector<std::string> argv = {profcollect_exe().string(),
                                         "convert",
                                         "-p",
                                         fixture("bat_prog_pie.bolt.ip.data").string(),
                                         "--format",
                                         "autofdo",
                                         "-o",
                                         (dir / "none.prof").string(),
                                         fixture("bat_prog_pie.bolt").string()};
  const CommandResult r = run_command(argv);
  EXPECT_NE(r.exit_code, 0) << r.describe(argv);
  EXPECT_NE(r.err.find("-update-debug-sections"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace profcollect::test
