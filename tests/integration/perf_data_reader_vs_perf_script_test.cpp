// Every recorded perf.data in tests/data/perf-data, read by our reader and by perf 6.1:
// samples (event, pid/tid, time, period, ip, branch stack), MMAP/MMAP2, COMM/FORK/EXIT must be
// the same multisets as `perf script` prints, and the per-type record counts and lost-sample
// totals the same as `perf report -D` reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <regex>

#include "collector/input/perf_data_reader.h"
#include "tests/integration/perf_script_oracle.h"
#include "tests/integration/recorded_perf_data.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

const RecordedPerfData& recorded(const std::string& name) {
  for (const auto& f : recorded_perf_data())
    if (f.name == name) return f;
  throw std::logic_error("not a recorded file: " + name);
}

// The two files perf cannot read to the end (README.md of the test data).
bool damaged(const std::string& name) { return recorded(name).damaged; }
bool perf_stops_early(const std::string& name) { return recorded(name).perf_stops_early; }

// perf -D lists each record as "0xOFFSET@... [0xSIZE]: event: TYPE"; the first byte after the
// last one it could read is where the damage is. In pipe mode ("@pipe") perf counts offsets
// from the end of the 16-byte pipe header; ours are file offsets.
uint64_t end_of_last_record_perf_read(const std::string& dump) {
  static const std::regex kLine(R"(^0x([0-9a-f]+)@(\S*) \[0x([0-9a-f]+)\]: event:)");
  uint64_t end = 0;
  std::istringstream in(dump);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, kLine)) continue;
    const uint64_t base = m[2] == "pipe" ? 16 : 0;
    end = std::max<uint64_t>(
        end, base + std::stoull(m[1], nullptr, 16) + std::stoull(m[3], nullptr, 16));
  }
  return end;
}

// a ⊆ b as multisets; "" when it holds.
std::string not_included(const std::string& what, std::vector<std::string> a,
                         std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (std::includes(b.begin(), b.end(), a.begin(), a.end())) return "";
  return multiset_difference(what + " (perf's prefix must be among ours)", a, b);
}

class PerfDataReaderVsPerfScript : public ::testing::TestWithParam<std::string> {};

TEST_P(PerfDataReaderVsPerfScript, SameRecordsAsPerf) {
  const std::string name = GetParam();
  const std::string path = recorded_perf_data_path(name).string();
  ASSERT_TRUE(fs::is_regular_file(path)) << path << " is missing";
  if (!have_executable("perf")) GTEST_SKIP() << "perf is not installed";

  const auto script_cmd = perf_script_command(path);
  CommandResult script = run_command(script_cmd);
  // perf exits non-zero where it stops early; what it printed before counts.
  if (!damaged(name) && !perf_stops_early(name)) {
    ASSERT_EQ(script.exit_code, 0) << script.describe(script_cmd);
  }
  ASSERT_FALSE(script.out.empty()) << script.describe(script_cmd);
  const CanonicalRecords perf = parse_perf_script(script.out);
  const auto dump_cmd = perf_dump_command(path);
  CommandResult dump_run = run_command(dump_cmd);
  const PerfDump dump = parse_perf_dump(dump_run.out);

  std::unique_ptr<RecordSource> source = open_perf_data(path);
  OurRecords ours = collect_our_records(*source);

  if (perf_stops_early(name)) {
    EXPECT_FALSE(ours.error) << ours.error->what();
    EXPECT_EQ(source->bytes_read(), source->bytes_total());
    EXPECT_EQ("", not_included("samples", perf.samples, ours.canonical.samples));
    EXPECT_EQ("", not_included("mmaps", perf.mmaps, ours.canonical.mmaps));
    EXPECT_EQ("", not_included("tasks", perf.tasks, ours.canonical.tasks));
  } else {
    if (damaged(name)) {
      ASSERT_TRUE(ours.error) << "the damage was not reported";
      EXPECT_EQ(ours.error->file(), path);
      EXPECT_EQ(ours.error->offset(), end_of_last_record_perf_read(dump_run.out));
      EXPECT_NE(ours.error->reason().find("size 0"), std::string::npos) << ours.error->reason();
    } else {
      EXPECT_FALSE(ours.error) << ours.error->what();
      EXPECT_EQ(source->bytes_read(), source->bytes_total());
    }
    EXPECT_EQ("", multiset_difference("samples", perf.samples, ours.canonical.samples));
    EXPECT_EQ("", multiset_difference("mmaps", perf.mmaps, ours.canonical.mmaps));
    EXPECT_EQ("", multiset_difference("tasks", perf.tasks, ours.canonical.tasks));
    // Time order: samples come in perf's own order (its ordered-events queue), nothing goes
    // backwards in time.
    EXPECT_TRUE(perf.samples == ours.canonical.samples) << "samples are not in perf's order";
  }
  EXPECT_EQ(ours.time_inversions, 0u) << ours.first_inversion;

  // perf counts every record it reads, before any filtering: every kernel type must match.
  if (dump.has_stats) {
    EXPECT_EQ("", count_difference(dump, ours));
  }
  std::cout << "[ records  ] " << name << ": perf script " << perf.samples.size() << " samples, "
            << perf.mmaps.size() << " mmaps, " << perf.tasks.size() << " comm/fork/exit; ours "
            << ours.canonical.samples.size() << "/" << ours.canonical.mmaps.size() << "/"
            << ours.canonical.tasks.size()
            << (dump.has_stats ? "; type counts checked" : "; no perf stats")
            << (ours.error ? "; error: " + std::string(ours.error->what()) : "") << "\n";
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return recorded_perf_data_test_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(RecordedData, PerfDataReaderVsPerfScript,
                         ::testing::ValuesIn(recorded_perf_data_names()), test_name);

}  // namespace
}  // namespace profcollect::test
