// AutoFDO profiles from IP samples, judged by llvm-profgen-19 --leading-ip-only on the same
// samples (it reads only branch-stack text, so each sample gets a dummy entry): "equal" means
// identical `llvm-profdata-19 merge --sample --text` output. Each fixture (make_autofdo_fixtures.sh) is a
// real cpu-clock recording of one process; llvm-profgen reads the unstripped binary, we read the
// binary that ran (stripped for the split-debug case, with its debug file found by build-id).
// Also: our unsymbolized profile read back by llvm-profgen --unsymbolized-profile, and the perf
// script reader giving the same samples as the perf.data reader.
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "collector/input/perf_script_reader.h"
#include "mapper/autofdo_binary.h"
#include "mapper/binary_matcher.h"
#include "mapper/dwarf_file.h"
#include "mapper/exec_segment_map.h"
#include "mapper/process_table.h"
#include "mapper/target_image_selector.h"
#include "output/autofdo_writer.h"
#include "output/unsymbolized_writer.h"
#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

struct Variant {
  std::string name;                     // test name
  std::string recording;                // <recording>.data
  std::string recorded;                 // the binary that ran
  std::string judged;                   // the binary llvm-profgen reads
  std::vector<std::string> debug_dirs;  // fixture directories searched for debug files
  std::string hot_function;             // the profile's hottest function, in the judge's output
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
      {"hot_dwarf5", "hot_dwarf5", "hot_dwarf5", "hot_dwarf5", {}, "_Z3hoti"},
      {"hot_dwarf4", "hot_dwarf4", "hot_dwarf4", "hot_dwarf4", {}, "_Z3hoti"},
      {"hot_fs", "hot_fs", "hot_fs", "hot_fs", {}, "_Z3hoti"},
      {"hot_cet", "hot_cet", "hot_cet", "hot_cet", {}, "_Z3hoti"},
      {"hot_gcc", "hot_gcc", "hot_gcc", "hot_gcc", {}, "_Z3hoti"},
      {"vec", "vec", "vec", "vec", {}, "_Z9histogramPKfi"},
      // Hot functions whose DWARF lies inside another function's (a lambda, a local class).
      {"nested", "nested", "nested", "nested", {}, "operator()"},
      {"split", "split", "split/hot_split", "ref/hot_split", {"debug"}, "_Z3hoti"},
      {"debuglink", "split", "link/hot_split", "ref/hot_split", {}, "_Z3hoti"},
      {"dwo", "dwo", "dwo/hot_dwo", "dwo/hot_dwo", {}, "_Z3hoti"},
  };
  return all;
}

class AutofdoIpTest : public AutofdoFixtureTest, public ::testing::WithParamInterface<Variant> {
 protected:
  std::unique_ptr<AutofdoBinary> open_binary(unsigned threads = 1) const {
    AutofdoBinaryOptions options;
    options.threads = threads;
    options.debug_dirs.clear();
    for (const std::string& dir : GetParam().debug_dirs)
      options.debug_dirs.push_back(fixture(dir).string());
    return AutofdoBinary::open(ElfBinary::open(fixture(GetParam().recorded).string()), options);
  }

  IpProfile samples() const {
    return read_ip_profile(fixture(GetParam().recording + ".data"), fixture(GetParam().recorded));
  }

  // llvm-profgen-19 --leading-ip-only on the recording, normalized.
  std::string reference() {
    const fs::path script = dir_ / "ip.perfscript";
    write_file(script, ip_perf_script(fixture(GetParam().recording + ".data")));
    const std::string profile =
        run_llvm_profgen({"--perfscript=" + script.string(),
                          "--binary=" + fixture(GetParam().judged).string(), "--leading-ip-only"},
                         dir_.path());
    return normalize_profile(profile, dir_.path());
  }

  TempDir dir_;
};

TEST_P(AutofdoIpTest, ProfileEqualsLlvmProfgenLeadingIpOnly) {
  const IpProfile ips = samples();
  ASSERT_GT(ips.total(), 500u) << "the recording holds too few samples of the binary to judge";
  std::unique_ptr<AutofdoBinary> binary = open_binary();
  AutofdoStats stats;
  const std::string ours = write_autofdo_from_ips(ips, *binary, &stats);
  // A sample may land where no sweep starts instructions (the PLT, which llvm-profgen leaves
  // out too); addresses translated wrongly would put most of them off instruction boundaries.
  EXPECT_LT(stats.samples_not_code * 100, ips.total()) << "samples off instruction boundaries";
  EXPECT_GT(stats.functions, 1u);

  const std::string expected = reference();
  // The judge's profile holds the program's hot function (so the comparison is not a trivial
  // one). Not necessarily first: in `vec` a static initializer whose inlined code is the hot
  // loop's can total one sample more.
  const std::string head = GetParam().hot_function + ":";
  ASSERT_TRUE(expected.starts_with(head) || expected.find("\n" + head) != std::string::npos)
      << expected;
  EXPECT_EQ("", profile_difference(normalize_profile(ours, dir_.path()), expected));

  // A long run drops what rendering decoded after each flush: no unit's address map, line table
  // or instructions stay decoded, only the inline stacks found; the next profile of the same
  // addresses (a daemon's next flush) is still the judge's and reads no DWARF unit again.
  EXPECT_GT(binary->dwarf().cached_addresses(), 0u);
  EXPECT_GT(binary->dwarf().decoded_units(), 0u);
  EXPECT_GT(binary->instructions().decoded_spans(), 0u);
  const DwarfSymbolizer::Counts first = binary->dwarf().counts();
  EXPECT_GT(first.unit_walks, 0u);
  EXPECT_EQ(first.addresses, binary->dwarf().cached_addresses());
  binary->drop_caches();
  EXPECT_EQ(binary->dwarf().cached_addresses(), first.addresses);
  EXPECT_EQ(binary->dwarf().decoded_units(), 0u);
  EXPECT_EQ(binary->instructions().decoded_spans(), 0u);
  EXPECT_EQ("",
            profile_difference(normalize_profile(write_autofdo_from_ips(ips, *binary), dir_.path()),
                               expected));
  EXPECT_EQ(binary->dwarf().counts().unit_walks, first.unit_walks) << "a unit was read again";
  EXPECT_EQ(binary->dwarf().counts().addresses, first.addresses)
      << "an address was looked up again";
  EXPECT_EQ(binary->dwarf().decoded_units(), 0u);

  // Told to forget, it reads the units again, and gets the same profile.
  binary->drop_caches(DwarfSymbolizer::Answers::Forget);
  EXPECT_EQ(binary->dwarf().cached_addresses(), 0u);
  EXPECT_EQ("",
            profile_difference(normalize_profile(write_autofdo_from_ips(ips, *binary), dir_.path()),
                               expected));
  EXPECT_GT(binary->dwarf().counts().unit_walks, first.unit_walks);
}

// As `convert` reads the DWARF: the units' functions indexed on two threads, the second
// through a handle of its own (split DWARF: its own .dwo files; a debug file found by build-id
// or debuglink: that file again).
TEST_P(AutofdoIpTest, TwoThreadsReadingTheDebugInfoGiveTheJudgesProfile) {
  const IpProfile ips = samples();
  ASSERT_FALSE(ips.empty());
  std::unique_ptr<AutofdoBinary> binary = open_binary(2);
  EXPECT_EQ("",
            profile_difference(normalize_profile(write_autofdo_from_ips(ips, *binary), dir_.path()),
                               reference()));
}

TEST_P(AutofdoIpTest, UnsymbolizedProfileReadBackByLlvmProfgenGivesTheSameProfile) {
  const IpProfile ips = samples();
  ASSERT_FALSE(ips.empty());
  std::unique_ptr<AutofdoBinary> binary = open_binary();
  const fs::path unsymbolized = dir_ / "ours.unsym";
  write_file(unsymbolized,
             write_unsymbolized_profile(ranges_from_ips(ips), binary->preferred_base()));
  const std::string round_trip =
      run_llvm_profgen({"--unsymbolized-profile=" + unsymbolized.string(),
                        "--binary=" + fixture(GetParam().judged).string(), "--leading-ip-only"},
                       dir_.path());
  EXPECT_EQ("", profile_difference(normalize_profile(round_trip, dir_.path()), reference()));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, AutofdoIpTest, ::testing::ValuesIn(variants()),
                         [](const auto& info) { return info.param.name; });

// What the fixtures claim to exercise, checked on the binaries and the judge's output, so that
// the comparisons above cannot pass on trivial profiles.
class AutofdoFixtureClaims : public AutofdoFixtureTest {
 protected:
  TempDir dir_;
};

TEST_F(AutofdoFixtureClaims, HotInlinesATemplateThreeLevelsDeep) {
  const fs::path script = dir_ / "ip.perfscript";
  write_file(script, ip_perf_script(fixture("hot_dwarf5.data")));
  const std::string profile = normalize_profile(
      run_llvm_profgen({"--perfscript=" + script.string(),
                        "--binary=" + fixture("hot_dwarf5").string(), "--leading-ip-only"},
                       dir_.path()),
      dir_.path());
  bool depth3_template = false;
  for (const std::string& line : split_lines(profile)) {
    if (line.starts_with("   ") && line.find(": _ZNK5MixerIdE3mixEdd:") != std::string::npos)
      depth3_template = true;
  }
  EXPECT_TRUE(depth3_template) << profile;
}

TEST_F(AutofdoFixtureClaims, VecSamplesSitMostlyOnDuplicatedCode) {
  const IpProfile ips = read_ip_profile(fixture("vec.data"), fixture("vec"));
  AutofdoBinaryOptions options;
  options.debug_dirs.clear();
  std::unique_ptr<AutofdoBinary> binary =
      AutofdoBinary::open(ElfBinary::open(fixture("vec").string()), options);
  uint64_t duplicated = 0;
  for (const auto& [address, count] : ips.counts()) {
    const InlineStack& frames = binary->dwarf().symbolize(address);
    if (!frames.empty() &&
        duplication_factor(frames.back().discriminator, binary->discriminator_encoding()) > 1) {
      duplicated += count;
    }
  }
  EXPECT_GT(duplicated * 4, ips.total()) << duplicated << " of " << ips.total() << " samples";
}

// The rows of `llvm-dwarfdump-19 --debug-line BINARY`: address -> discriminator of the row an
// address lookup finds (the last row at that address; end_sequence rows mark no instruction).
std::map<uint64_t, uint64_t> dwarfdump_discriminators(const fs::path& binary) {
  const std::vector<std::string> argv = {"llvm-dwarfdump-19", "--debug-line", binary.string()};
  const CommandResult run = run_command(argv);
  EXPECT_EQ(run.exit_code, 0) << run.describe(argv);
  std::map<uint64_t, uint64_t> rows;
  for (const std::string& line : split_lines(run.out)) {
    // "Address Line Column File ISA Discriminator OpIndex Flags"
    if (!line.starts_with("0x") || line.find("end_sequence") != std::string::npos) continue;
    std::istringstream fields(line);
    std::string address;
    uint64_t row_line = 0, column = 0, file = 0, isa = 0, discriminator = 0;
    if (fields >> address >> row_line >> column >> file >> isa >> discriminator)
      rows[std::stoull(address, nullptr, 16)] = discriminator;
  }
  return rows;
}

// Every instruction whose line-table row carries a discriminator above 24 bits, by
// llvm-dwarfdump-19's reading of `binary`.
std::vector<uint64_t> wide_discriminator_addresses(const fs::path& binary) {
  std::vector<uint64_t> wide;
  for (const auto& [address, discriminator] : dwarfdump_discriminators(binary))
    if (discriminator >= (uint64_t{1} << 24)) wide.push_back(address);
  return wide;
}

// The claim is about the binary, not about where the recording's samples landed (those few
// instructions, in scale()'s vectorized loop, may get no sample at all): llvm-dwarfdump-19 finds
// discriminators above 24 bits in its line table, and we read the same value at each of them.
// A render asked to stop (a flush whose time is up) stops within its stride of instructions, and
// one never asked makes the same profile.
TEST_F(AutofdoFixtureClaims, ARenderAskedToStopStopsWithinAStrideOfInstructions) {
  AutofdoBinaryOptions options;
  options.debug_dirs.clear();
  std::unique_ptr<AutofdoBinary> binary =
      AutofdoBinary::open(ElfBinary::open(fixture("vec").string()), options);
  // A sample on every instruction of the program: thousands to symbolize.
  IpProfile ips;
  binary->instructions().for_each(0, UINT64_MAX,
                                  [&](const Instruction& i) { ips.add(i.address, 1); });
  AutofdoStats stats;
  const std::string plain = write_autofdo_from_ips(ips, *binary, &stats);
  constexpr unsigned kStride = 16;
  ASSERT_GE(stats.instructions, 4 * kStride) << "too few instructions to see the checks";
  uint64_t asked = 0;
  const RenderStop never{[&] {
                           ++asked;
                           return false;
                         },
                         kStride};
  EXPECT_EQ(write_autofdo_from_ips(ips, *binary, nullptr, &never), plain);
  EXPECT_EQ(asked, stats.instructions / kStride);
  asked = 0;
  const RenderStop at_once{[&] {
                             ++asked;
                             return true;
                           },
                           kStride};
  EXPECT_THROW(write_autofdo_from_ips(ips, *binary, nullptr, &at_once), RenderStopped);
  EXPECT_EQ(asked, 1u);
}

TEST_F(AutofdoFixtureClaims, FlowSensitiveBinaryHasDiscriminatorsLibdwRejects) {
  if (!have_executable("llvm-dwarfdump-19")) GTEST_SKIP() << "llvm-dwarfdump-19 is not installed";
  AutofdoBinaryOptions options;
  options.debug_dirs.clear();
  std::unique_ptr<AutofdoBinary> binary =
      AutofdoBinary::open(ElfBinary::open(fixture("hot_fs").string()), options);
  EXPECT_EQ(binary->discriminator_encoding(), DiscriminatorEncoding::FlowSensitive);
  const std::map<uint64_t, uint64_t> rows = dwarfdump_discriminators(fixture("hot_fs"));
  size_t wide = 0;
  for (const auto& [address, discriminator] : rows) {
    if (discriminator < (uint64_t{1} << 24)) continue;
    ++wide;
    const InlineStack& frames = binary->dwarf().symbolize(address);
    ASSERT_FALSE(frames.empty()) << "no line for 0x" << std::hex << address;
    EXPECT_EQ(frames.back().discriminator, discriminator) << "at 0x" << std::hex << address;
  }
  EXPECT_GT(wide, 0u) << "llvm-dwarfdump-19 finds no discriminator above 24 bits in hot_fs";
}

// The comparison above need not meet them, so here is one that must: a sample on every
// instruction with a wide discriminator, our profile against llvm-profgen-19's of the same IPs.
TEST_F(AutofdoFixtureClaims, SamplesOnEveryWideDiscriminatorGiveLlvmProfgensProfile) {
  if (!have_executable("llvm-dwarfdump-19")) GTEST_SKIP() << "llvm-dwarfdump-19 is not installed";
  AutofdoBinaryOptions options;
  options.debug_dirs.clear();
  std::unique_ptr<AutofdoBinary> binary =
      AutofdoBinary::open(ElfBinary::open(fixture("hot_fs").string()), options);
  IpProfile ips;
  uint64_t count = 100;
  for (const uint64_t address : wide_discriminator_addresses(fixture("hot_fs")))
    ips.add(address, count++);
  ASSERT_FALSE(ips.empty()) << "llvm-dwarfdump-19 finds no discriminator above 24 bits in hot_fs";
  AutofdoStats stats;
  const std::string ours = write_autofdo_from_ips(ips, *binary, &stats);
  EXPECT_EQ(stats.samples_not_code, 0u) << "llvm-dwarfdump's rows are not our instructions";
  const fs::path unsymbolized = dir_ / "wide.unsym";
  write_file(unsymbolized,
             write_unsymbolized_profile(ranges_from_ips(ips), binary->preferred_base()));
  const std::string theirs =
      run_llvm_profgen({"--unsymbolized-profile=" + unsymbolized.string(),
                        "--binary=" + fixture("hot_fs").string(), "--leading-ip-only"},
                       dir_.path());
  ASSERT_FALSE(theirs.empty());
  EXPECT_EQ("", profile_difference(normalize_profile(ours, dir_.path()),
                                   normalize_profile(theirs, dir_.path())));
}

TEST_F(AutofdoFixtureClaims, DebuglinkBinaryFindsItsDebugFileByDebuglink) {
  std::shared_ptr<const ElfBinary> elf = ElfBinary::open(fixture("link/hot_split").string());
  EXPECT_FALSE(has_dwarf(*elf));
  EXPECT_EQ(elf->debuglink(), "hot_split.debug");
  AutofdoBinaryOptions options;
  options.debug_dirs.clear();
  std::unique_ptr<AutofdoBinary> binary = AutofdoBinary::open(elf, options);
  EXPECT_EQ(binary->dwarf().file().source(), DwarfSource::DebuglinkFile);
}

TEST_F(AutofdoFixtureClaims, SplitBinaryIsStrippedAndItsDebugFileIsFoundByBuildId) {
  std::shared_ptr<const ElfBinary> elf = ElfBinary::open(fixture("split/hot_split").string());
  EXPECT_FALSE(has_dwarf(*elf));
  AutofdoBinaryOptions options;
  options.debug_dirs = {fixture("debug").string()};
  std::unique_ptr<AutofdoBinary> binary = AutofdoBinary::open(elf, options);
  EXPECT_EQ(binary->dwarf().file().source(), DwarfSource::BuildIdFile);
  EXPECT_NE(binary->symbol_file().find("/.build-id/"), std::string::npos) << binary->symbol_file();
}

// `perf script` text through PerfScriptReader gives exactly the samples the perf.data reader
// gives (what `convert --perf-script` relies on).
TEST_F(AutofdoFixtureClaims, PerfScriptReaderGivesTheSamplesOfThePerfData) {
  const fs::path data = fixture("hot_dwarf5.data"), binary_path = fixture("hot_dwarf5");
  const IpProfile from_data = read_ip_profile(data, binary_path);
  const fs::path script = dir_ / "ip.perfscript";
  write_file(script, ip_perf_script(data));

  std::shared_ptr<const ElfBinary> elf = ElfBinary::open(binary_path.string());
  std::unique_ptr<PerfScriptReader> reader = PerfScriptReader::open(script.string());
  TargetImageSelector selector(
      std::make_shared<LoadedImage>(elf, BinaryIdentity{binary_path.string(), elf->build_id()}),
      false, [](std::string_view) -> const BuildId* { return nullptr; });
  ProcessTable processes;
  ImageResolver resolver(selector);
  IpProfile from_script;
  Record record;
  while (reader->next(record)) {
    if (const auto* sample = std::get_if<SampleRecord>(&record)) {
      const ResolvedAddress resolved =
          resolver.resolve(processes, sample->pid, sample->ip, sample->cpumode);
      if (resolved.outcome == SampleOutcome::Mapped) from_script.add(resolved.vaddr);
    } else {
      processes.update(record);
    }
  }
  EXPECT_EQ(reader->stats().skipped_lines, 0u);
  EXPECT_EQ(from_script.total(), from_data.total());
  using Counts = std::map<uint64_t, uint64_t>;
  const Counts script_counts(from_script.counts().begin(), from_script.counts().end());
  const Counts data_counts(from_data.counts().begin(), from_data.counts().end());
  EXPECT_EQ(script_counts, data_counts);
}

}  // namespace
}  // namespace profcollect::test
