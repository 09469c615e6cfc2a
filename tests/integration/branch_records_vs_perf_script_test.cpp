// Branch-stack records of every recorded perf.data in tests/data/perf-data that has
// PERF_SAMPLE_BRANCH_STACK (the list's flag, itself checked against `perf evlist -v` by
// recorded_perf_data_test), against two views perf 6.1 gives of them:
//
// - `perf script -F brstack` prints from/to/M|P|-/X|-/A|-/cycles/type per entry (the type is the
//   last slot: empty for PERF_BR_UNKNOWN; brstacksym and brstackoff print the same five flags).
//   It does not print the speculation bits (spec, bits 24-25), nor new_type/priv when type is
//   not PERF_BR_EXTEND_ABI.
// - `perf report -D` dumps each sample's raw bytes and its "branch stack: nr:N" with every
//   entry's from and to. From those bytes the test takes each entry's whole 64-bit flags word,
//   so the bits perf script does not print (AMD BRS speculation in perf.data.branch_stack_spec)
//   are checked too: every bit we keep must be the bit the kernel wrote.
//
// perf_data_reader_vs_perf_script_test compares whole sample lines; this one keeps to branch
// stacks and adds the raw flags, the entry counts and the branch attr of the BRS file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "collector/input/perf_data_reader.h"
#include "tests/integration/perf_script_oracle.h"
#include "tests/integration/recorded_perf_data.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kSampleBranchStack = 1u << 11;
constexpr uint32_t kPerfTypeRaw = 4;

uint64_t load_u64(const std::vector<uint8_t>& bytes, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof v);  // the testdata is little-endian, like us
  return v;
}

struct DumpedSample {
  std::vector<uint8_t> raw;  // the whole record, header included
  uint64_t nr = 0;
  std::vector<std::pair<uint64_t, uint64_t>> from_to;  // as perf printed them
  bool has_branch_stack = false;
};

uint64_t hex(const std::string& s) { return std::stoull(s, nullptr, 16); }

// Every PERF_RECORD_SAMPLE of `perf report -D` that printed a branch stack: its raw bytes and
// the entries perf decoded. perf dumps a record's bytes when it reads it ("0xOFFSET@FILE
// [0xSIZE]: event: 9" and hex lines) and prints the decoded record when it delivers it
// ("TIME 0xOFFSET [0xSIZE]: PERF_RECORD_SAMPLE..."), possibly later: the offset joins them.
std::vector<DumpedSample> dumped_branch_samples(const std::string& dump) {
  std::vector<DumpedSample> out;
  std::map<uint64_t, std::vector<uint8_t>> raw_at;
  std::vector<uint8_t>* raw = nullptr;  // the record being dumped
  bool in_sample = false;
  size_t expected_entries = 0;
  std::istringstream in(dump);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find('@');
    if (line.rfind("0x", 0) == 0 && at != std::string::npos &&
        line.find("]: event:") != std::string::npos) {
      raw = &raw_at[hex(line.substr(0, at))];
      raw->clear();
      in_sample = false;
      continue;
    }
    // ".  0010:  15 3f 02 00 ... (16 bytes)   <ascii>"
    if (raw != nullptr && line.rfind(".  ", 0) == 0 && line.size() > 10 && line[7] == ':') {
      std::istringstream bytes(line.substr(10, 16 * 3));
      for (std::string b; bytes >> b && b.size() == 2;)
        raw->push_back(static_cast<uint8_t>(hex(b)));
      continue;
    }
    const size_t rec = line.find("]: PERF_RECORD_SAMPLE");
    if (rec != std::string::npos) {
      raw = nullptr;
      in_sample = false;
      const size_t bracket = line.rfind(" [", rec);
      if (bracket == std::string::npos || bracket == 0) continue;
      const size_t space = line.rfind(' ', bracket - 1);  // none: the record has no time
      const size_t start = space == std::string::npos ? 0 : space + 1;
      const uint64_t offset = hex(line.substr(start, bracket - start));
      DumpedSample s;
      s.raw = raw_at[offset];
      raw_at.erase(offset);
      out.push_back(std::move(s));
      in_sample = true;
      continue;
    }
    if (in_sample && line.rfind("... branch stack: nr:", 0) == 0) {
      out.back().nr = std::stoull(line.substr(std::strlen("... branch stack: nr:")));
      out.back().has_branch_stack = true;
      expected_entries = out.back().nr;
      continue;
    }
    // ".....  0: ffffffff9dd022c4 -> ffffffff9dd022b2 0 cycles  P   0 "
    if (in_sample && expected_entries > 0 && line.rfind(".....", 0) == 0) {
      std::istringstream t(line.substr(5));
      std::string index, from, arrow, to;
      t >> index >> from >> arrow >> to;
      if (arrow != "->") continue;
      out.back().from_to.emplace_back(hex(from), hex(to));
      --expected_entries;
    }
  }
  std::erase_if(out, [](const DumpedSample& s) { return !s.has_branch_stack; });
  return out;
}

// "nr=N from/to/flags ..." with the raw flags words, from perf's dump: the entries start where
// the bytes hold nr (then hw_idx when the file has it) followed by the first from and to perf
// printed. "" with `error` set when they cannot be found.
std::string dumped_branch_line(const DumpedSample& s, bool has_hw_idx, std::string& error) {
  std::ostringstream line;
  line << "nr=" << s.nr;
  if (s.nr == 0 || s.from_to.size() != s.nr) {
    if (s.from_to.size() != s.nr)
      error = "perf printed " + std::to_string(s.from_to.size()) + " entries for nr " +
              std::to_string(s.nr);
    return line.str();
  }
  const size_t lead = has_hw_idx ? 16 : 8;  // nr (+ hw_idx) before the entries
  size_t at = 0;
  for (size_t p = 8 + lead; p + 24 * s.nr <= s.raw.size(); p += 8) {
    if (load_u64(s.raw, p - lead) == s.nr && load_u64(s.raw, p) == s.from_to[0].first &&
        load_u64(s.raw, p + 8) == s.from_to[0].second) {
      at = p;
      break;
    }
  }
  if (at == 0) {
    error = "branch stack not found in the dumped bytes";
    return line.str();
  }
  for (size_t i = 0; i < s.nr; ++i) {
    const size_t e = at + 24 * i;
    if (load_u64(s.raw, e) != s.from_to[i].first || load_u64(s.raw, e + 8) != s.from_to[i].second)
      error = "entry " + std::to_string(i) + " bytes differ from what perf printed";
    char buf[80];
    std::snprintf(buf, sizeof buf, " %" PRIx64 "/%" PRIx64 "/%" PRIx64, s.from_to[i].first,
                  s.from_to[i].second, load_u64(s.raw, e + 16));
    line << buf;
  }
  return line.str();
}

std::string our_branch_line(const SampleRecord& s) {
  std::ostringstream line;
  line << "nr=" << s.branches.size();
  for (const BranchEntry& e : s.branches) {
    char buf[80];
    std::snprintf(buf, sizeof buf, " %" PRIx64 "/%" PRIx64 "/%" PRIx64, e.from, e.to, e.flags);
    line << buf;
  }
  return line.str();
}

// The brstack part of perf_script_oracle's canonical sample lines: the tokens with four '/'
// after the ip (event names hold no '/' followed by flags of this shape).
std::vector<std::string> brstack_only(const std::vector<std::string>& samples) {
  std::vector<std::string> out;
  for (const std::string& line : samples) {
    std::istringstream t(line);
    std::string joined;
    for (std::string tok; t >> tok;)
      if (std::count(tok.begin(), tok.end(), '/') >= 5) joined += " " + tok;
    out.push_back(joined);
  }
  return out;
}

struct OurBranchView {
  std::vector<std::string> raw_lines;  // our_branch_line per sample with a branch stack
  std::map<uint64_t, uint64_t> entries_per_sample;  // nr -> samples
  std::map<unsigned, uint64_t> spec_values;         // spec bits -> entries
  bool any_hw_idx = false;
};

OurBranchView our_branch_view(RecordSource& source) {
  OurBranchView v;
  Record r;
  while (source.next(r)) {
    const auto* s = std::get_if<SampleRecord>(&r);
    if (s == nullptr) continue;
    const EventAttr& attr = source.session().attrs.at(s->attr_index);
    if (!(attr.sample_type & kSampleBranchStack)) continue;
    v.raw_lines.push_back(our_branch_line(*s));
    v.entries_per_sample[s->branches.size()]++;
    v.any_hw_idx = v.any_hw_idx || s->has_hw_idx;
    for (const BranchEntry& e : s->branches) v.spec_values[e.spec()]++;
  }
  return v;
}

class BranchRecordsVsPerf : public ::testing::TestWithParam<std::string> {};

TEST_P(BranchRecordsVsPerf, SameBranchStacksAsPerf) {
  const std::string name = GetParam();
  const std::string path = recorded_perf_data_path(name).string();
  ASSERT_TRUE(fs::is_regular_file(path)) << path << " is missing";
  if (!have_executable("perf")) GTEST_SKIP() << "perf is not installed";

  // 1. The printed fields, through perf script -F brstack.
  const auto script_cmd = perf_script_command(path);
  CommandResult script = run_command(script_cmd);
  ASSERT_EQ(script.exit_code, 0) << script.describe(script_cmd);
  const CanonicalRecords perf = parse_perf_script(script.out);
  std::unique_ptr<RecordSource> source = open_perf_data(path);
  const OurRecords ours = collect_our_records(*source);
  ASSERT_FALSE(ours.error) << ours.error->what();
  const std::vector<std::string> perf_brstacks = brstack_only(perf.samples);
  const std::vector<std::string> our_brstacks = brstack_only(ours.canonical.samples);
  size_t printed_entries = 0;
  for (const std::string& s : perf_brstacks) printed_entries += std::count(s.begin(), s.end(), ' ');
  EXPECT_GT(printed_entries, 0u) << "perf script printed no branch entries";
  EXPECT_EQ("", multiset_difference("brstack fields", perf_brstacks, our_brstacks));

  // 2. Every bit of every flags word, and the entry counts, through perf report -D.
  const auto dump_cmd = perf_dump_command(path);
  CommandResult dump = run_command(dump_cmd);
  ASSERT_EQ(dump.exit_code, 0) << dump.describe(dump_cmd);
  std::unique_ptr<RecordSource> again = open_perf_data(path);
  const OurBranchView view = our_branch_view(*again);
  // Whether hw_idx sits between nr and the entries: perf's word for the attr.
  bool hw_idx = false;
  for (const std::string& line : perf_evlist(path))
    hw_idx =
        hw_idx || evlist_field(line, "branch_sample_type").find("HW_INDEX") != std::string::npos;
  EXPECT_EQ(hw_idx, view.any_hw_idx);
  std::vector<std::string> perf_raw;
  std::string error;
  for (const DumpedSample& s : dumped_branch_samples(dump.out)) {
    perf_raw.push_back(dumped_branch_line(s, hw_idx, error));
    ASSERT_EQ(error, "") << "sample " << perf_raw.size() << " of perf report -D";
  }
  ASSERT_FALSE(perf_raw.empty()) << "perf report -D printed no branch stacks";
  EXPECT_EQ("", multiset_difference("raw branch flags", perf_raw, view.raw_lines));

  std::ostringstream spec;
  for (const auto& [value, n] : view.spec_values) spec << " spec" << value << "=" << n;
  std::ostringstream counts;
  for (const auto& [nr, n] : view.entries_per_sample) counts << " " << n << "x" << nr;
  std::cout << "[ branches ] " << name << ": " << perf_raw.size()
            << " samples (entries:" << counts.str() << "), " << printed_entries
            << " entries printed by perf script," << spec.str() << "\n";
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return recorded_perf_data_test_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(RecordedData, BranchRecordsVsPerf,
                         ::testing::ValuesIn(recorded_perf_data_names(true)), test_name);

// The branch-stack files of the README are the ones the list flags.
TEST(BranchRecordsVsPerfFiles, EveryKnownBranchFileIsCompared) {
  const std::vector<std::string> files = recorded_perf_data_names(true);
  EXPECT_EQ(files, (std::vector<std::string>{
                       "perf.data.branch-4.14", "perf.data.branch_stack_hw_index",
                       "perf.data.branch_stack_spec", "perf.data.callgraph_and_branch-3.4",
                       "perf.data.raw_callgraph_branch-3.4"}));
}

// perf.data.branch_stack_spec: AMD BRS, raw event rc4, 16 entries per sample. Our attr and
// entry counts against perf evlist -v and perf report -D; the speculation bits are in the raw
// flags compared above, and must be there (not masked away).
TEST(BranchRecordsVsPerfFiles, AmdBrsFile) {
  if (!have_executable("perf")) GTEST_SKIP() << "perf is not installed";
  const std::string path = recorded_perf_data_path("perf.data.branch_stack_spec").string();
  ASSERT_TRUE(fs::is_regular_file(path)) << path << " is missing";
  const std::vector<std::string> evlist = perf_evlist(path);
  ASSERT_EQ(evlist.size(), 1u);
  std::unique_ptr<RecordSource> source = open_perf_data(path);
  const OurBranchView view = our_branch_view(*source);
  ASSERT_EQ(source->session().attrs.size(), 1u);
  const EventAttr& attr = source->session().attrs[0];
  EXPECT_EQ(std::to_string(attr.type), evlist_field(evlist[0], "type"));
  char config[32];
  std::snprintf(config, sizeof config, "%#" PRIx64, attr.config);
  EXPECT_EQ(config, evlist_field(evlist[0], "config"));
  // The README's description of the file, which perf's own view must also give.
  EXPECT_EQ(evlist_field(evlist[0], "type"), std::to_string(kPerfTypeRaw));
  EXPECT_EQ(evlist_field(evlist[0], "config"), "0xc4");

  CommandResult dump = run_command(perf_dump_command(path));
  std::map<uint64_t, uint64_t> perf_counts;
  for (const DumpedSample& s : dumped_branch_samples(dump.out)) perf_counts[s.nr]++;
  EXPECT_EQ(perf_counts, view.entries_per_sample);
  EXPECT_EQ(perf_counts.size(), 1u);
  EXPECT_EQ(perf_counts.begin()->first, 16u) << "BRS keeps 16 entries";
  uint64_t speculative_marked = 0;
  for (const auto& [value, n] : view.spec_values)
    if (value != 0) speculative_marked += n;
  EXPECT_GT(speculative_marked, 0u) << "the spec bits of this recording are gone";
}

}  // namespace
}  // namespace profcollect::test
