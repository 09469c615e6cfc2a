// Every kind of perf.data that `perf record` writes on this machine (file, pipe, -z, --threads,
// killed mid-run; see tests/fixtures/make_perf_data_variants.sh), read by our reader and judged
// by perf 6.1: the same samples, mappings and task records as `perf script`, the same record
// counts as `perf report -D`. Pipe mode is also read from standard input.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <iostream>
#include <thread>

#include "collector/input/perf_data_reader.h"
#include "tests/integration/fixture_set.h"
#include "tests/integration/perf_script_oracle.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

// The recordings: made once per build tree, again when the script (or fixture_lib.sh) changes.
// The script builds nothing, so it has no program sources.
FixtureSet& variants_set() {
  static FixtureSet set({.name = "variants", .script = "make_perf_data_variants.sh"});
  return set;
}
[[maybe_unused]] const bool variants_set_registered = register_fixture_set(&variants_set);

const fs::path& fixtures_dir() { return variants_set().status().dir; }

struct Variant {
  std::string name;   // what our reader reads
  std::string judge;  // what perf reads (the same file, except for the killed recording)
};

std::ostream& operator<<(std::ostream& os, const Variant& v) { return os << v.name; }

class PerfDataVariants : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    if (!have_executable("perf")) GTEST_SKIP() << "perf is not installed";
    variants_set().require_ready();
  }
  static std::string path(const std::string& name) { return (fixtures_dir() / name).string(); }
};

// The time of a canonical sample ("cpu-clock 9604/9604 967.745583 250000 562aa2136401").
std::string sample_time(const std::string& sample) {
  std::istringstream in(sample);
  std::string event, pids, time;
  in >> event >> pids >> time;
  return time;
}

// Where `ours` leaves perf's order, "" when it does not. Samples of one time (two CPUs sampled in
// the same tick: a --threads recording has them in two files) may come either way: perf's own
// order between them is that of its reader, not of the events.
std::string order_difference(const std::vector<std::string>& perf,
                             const std::vector<std::string>& ours) {
  if (perf.size() != ours.size())
    return "perf has " + std::to_string(perf.size()) + " samples, ours " +
           std::to_string(ours.size());
  for (size_t i = 0; i < perf.size();) {
    size_t j = i;
    while (j < perf.size() && sample_time(perf[j]) == sample_time(perf[i])) ++j;
    std::vector<std::string> a(perf.begin() + i, perf.begin() + j),
        b(ours.begin() + i, ours.begin() + j);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) return "sample " + std::to_string(i) + ": perf " + perf[i] + ", ours " + ours[i];
    i = j;
  }
  return "";
}

// Compares `ours` with perf's view of `judge`; returns the number of records compared.
size_t expect_same_as_perf(const OurRecords& ours, const std::string& judge) {
  const auto script_cmd = perf_script_command(judge);
  const CommandResult script = run_command(script_cmd);
  EXPECT_EQ(script.exit_code, 0) << script.describe(script_cmd);
  const CanonicalRecords perf = parse_perf_script(script.out);
  const auto dump_cmd = perf_dump_command(judge);
  const CommandResult dump_run = run_command(dump_cmd);
  EXPECT_EQ(dump_run.exit_code, 0) << dump_run.describe(dump_cmd);
  const PerfDump dump = parse_perf_dump(dump_run.out);

  EXPECT_FALSE(ours.error) << ours.error->what();
  // A recording without samples would make the comparison vacuous.
  EXPECT_GT(perf.samples.size(), 100u);
  EXPECT_EQ("", multiset_difference("samples", perf.samples, ours.canonical.samples));
  // Time order: nothing goes backwards, and samples come in perf's own order.
  EXPECT_EQ(ours.time_inversions, 0u) << ours.first_inversion;
  EXPECT_EQ("", order_difference(perf.samples, ours.canonical.samples))
      << "samples are not in perf's order";
  EXPECT_EQ("", multiset_difference("mmaps", perf.mmaps, ours.canonical.mmaps));
  EXPECT_EQ("", multiset_difference("tasks", perf.tasks, ours.canonical.tasks));
  EXPECT_TRUE(dump.has_stats);
  EXPECT_EQ("", count_difference(dump, ours));
  return perf.size();
}

TEST_P(PerfDataVariants, SameRecordsAsPerf) {
  const Variant& v = GetParam();
  std::unique_ptr<RecordSource> source = open_perf_data(path(v.name));
  const OurRecords ours = collect_our_records(*source);
  EXPECT_EQ(source->bytes_read(), source->bytes_total());
  const size_t compared = expect_same_as_perf(ours, path(v.judge));
  std::cout << "[ records  ] " << v.name << ": " << compared << " records compared with perf\n";
}

INSTANTIATE_TEST_SUITE_P(Recorded, PerfDataVariants,
                         ::testing::Values(Variant{"normal.data", "normal.data"},
                                           Variant{"pipe.data", "pipe.data"},
                                           Variant{"compressed.data", "compressed.data"},
                                           Variant{"threads.data", "threads.data"},
                                           Variant{"killed.data", "killed.judge.data"}),
                         [](const auto& info) {
                           std::string n = info.param.name.substr(0, info.param.name.find('.'));
                           return n;
                         });

// The fixtures are what they claim to be, so that the comparisons above exercise each path.
TEST_F(PerfDataVariants, FixturesHaveTheirKind) {
  const CommandResult dump = run_command(perf_dump_command(path("compressed.data")));
  EXPECT_GT(parse_perf_dump(dump.out).counts["COMPRESSED"], 0u) << "no COMPRESSED records";

  EXPECT_TRUE(fs::is_regular_file(fixtures_dir() / "threads.data" / "data"));
  EXPECT_TRUE(fs::is_regular_file(fixtures_dir() / "threads.data" / "data.0"));

  std::ifstream killed(path("killed.data"), std::ios::binary);
  char header[104];
  ASSERT_TRUE(killed.read(header, sizeof header));
  EXPECT_EQ(std::memcmp(header, "PERFILE2", 8), 0);
  uint64_t data_size = 1;
  std::memcpy(&data_size, header + 48, 8);
  EXPECT_EQ(data_size, 0u) << "killed.data should have the data size of a killed perf";
  // perf itself reads nothing from it: that is why the judge is a patched copy.
  const CommandResult script = run_command(perf_script_command(path("killed.data")));
  EXPECT_EQ(parse_perf_script(script.out).samples.size(), 0u);

  std::ifstream pipe(path("pipe.data"), std::ios::binary);
  char pipe_header[16];
  ASSERT_TRUE(pipe.read(pipe_header, sizeof pipe_header));
  uint64_t pipe_header_size = 0;
  std::memcpy(&pipe_header_size, pipe_header + 8, 8);
  EXPECT_EQ(pipe_header_size, 16u) << "pipe.data is not in pipe mode";
}

// Points standard input at a pipe fed from `file` by a thread, for the life of the object.
class StdinFromPipe {
 public:
  explicit StdinFromPipe(const std::string& file) {
    ::signal(SIGPIPE, SIG_IGN);  // a reader that stops early must not kill the test
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    saved_ = ::dup(STDIN_FILENO);
    ::dup2(fds[0], STDIN_FILENO);
    ::close(fds[0]);
    writer_ = std::thread([file, fd = fds[1]] {
      std::ifstream in(file, std::ios::binary);
      char buf[65536];
      while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        const char* p = buf;
        for (auto left = static_cast<size_t>(in.gcount()); left > 0;) {
          ssize_t n = ::write(fd, p, left);
          if (n <= 0) break;
          p += n;
          left -= static_cast<size_t>(n);
        }
      }
      ::close(fd);
    });
  }
  ~StdinFromPipe() {
    // Unblocks the writer if the reader stopped early, then restores stdin.
    ::dup2(saved_, STDIN_FILENO);
    ::close(saved_);
    writer_.join();
  }

 private:
  int saved_ = -1;
  std::thread writer_;
};

TEST_F(PerfDataVariants, PipeModeFromStandardInput) {
  OurRecords ours;
  uint64_t total = 1, read = 0;
  {
    StdinFromPipe stdin_pipe(path("pipe.data"));
    std::unique_ptr<RecordSource> source = open_perf_data("-");
    ours = collect_our_records(*source);
    total = source->bytes_total();
    read = source->bytes_read();
  }
  EXPECT_EQ(total, 0u) << "a pipe has no known size";
  EXPECT_EQ(read, fs::file_size(path("pipe.data")));
  const size_t compared = expect_same_as_perf(ours, path("pipe.data"));
  std::cout << "[ records  ] pipe.data via stdin: " << compared << " records compared with perf\n";
}

}  // namespace
}  // namespace profcollect::test
