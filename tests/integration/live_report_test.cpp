// `profcollect report DIR` on a live collection's output: it must print what the files hold --
// collection.json's figures, and per binary meta.json's samples and the per-function totals of
// its bolt.fdata -- checked against the files as this test reads them (strictly, with its own
// parser). A damaged profile makes it fail naming the file; a directory without profcollect
// output is refused; a `perf record --threads` directory is still read as perf.data.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/integration/live_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class LiveReportTest : public LiveFixtureTest {};

TEST_F(LiveReportTest, ReportOfADirectoryShowsWhatItsFilesHold) {
  const fs::path spawner = fixture("live_spawner");
  const fs::path library = fixture("liblive_plug.so");
  TempDir tmp;
  const fs::path out = tmp / "out", go = tmp / "go";
  write_file(go, "");  // start at once
  const ProfcollectRun run = run_profcollect({"-o", out.string(), "--binary", spawner.string(),
                                              "--binary", library.string(), "--", spawner.string(),
                                              go.string(), library.string(), "1"});
  ASSERT_EQ(run.run.exit_code, 0) << run.describe();

  const json collection = read_json_file(out / "collection.json");
  ASSERT_FALSE(collection.is_discarded());
  struct Expected {
    json meta;
    StrictFdata fdata;
  };
  std::map<std::string, Expected> expected;  // by directory name
  for (const fs::path& binary : {spawner, library}) {
    const auto dirs = profile_dirs(out, binary.filename().string());
    ASSERT_EQ(dirs.size(), 1u) << run.describe();
    Expected e{read_json_file(dirs[0] / "meta.json"), read_fdata_strictly(dirs[0] / "bolt.fdata")};
    ASSERT_FALSE(e.meta.is_discarded());
    ASSERT_TRUE(e.fdata.valid()) << e.fdata.error;
    expected[dirs[0].filename().string()] = std::move(e);
  }

  const ProfcollectRun as_json = run_profcollect({"report", out.string(), "--json"});
  ASSERT_EQ(as_json.run.exit_code, 0) << as_json.describe();
  const json report = json::parse(as_json.run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << as_json.describe();
  EXPECT_EQ(report.at("collection"), collection);
  EXPECT_EQ(report.at("samples"), collection.at("samples"));
  EXPECT_EQ(report.at("lost"), collection.at("lost"));
  EXPECT_TRUE(report.at("problems").empty()) << report.dump(2);
  ASSERT_EQ(report.at("binaries").size(), expected.size()) << report.dump(2);
  uint64_t previous = UINT64_MAX;
  for (const json& b : report.at("binaries")) {
    const std::string dir = b.at("directory").get<std::string>();
    ASSERT_TRUE(expected.count(dir)) << "unknown directory " << dir;
    const Expected& e = expected.at(dir);
    for (const char* key :
         {"path", "build_id", "event", "samples", "first_sample_ns", "last_sample_ns"})
      EXPECT_EQ(b.at(key), e.meta.at(key)) << dir << ": " << key;
    EXPECT_EQ(b.at("fdata_samples").get<uint64_t>(), e.fdata.total()) << dir;
    const auto per_function = e.fdata.per_function();
    ASSERT_EQ(b.at("functions").size(), per_function.size()) << dir;  // fewer than --top's 20
    uint64_t last = UINT64_MAX;
    for (const json& f : b.at("functions")) {
      const std::string name = f.at("name").get<std::string>();
      ASSERT_TRUE(per_function.count(name))
          << dir << ": function " << name << " is not in the fdata";
      EXPECT_EQ(f.at("samples").get<uint64_t>(), per_function.at(name)) << dir << ": " << name;
      EXPECT_NEAR(f.at("share").get<double>(),
                  static_cast<double>(per_function.at(name)) / e.fdata.total(), 1e-9);
      EXPECT_LE(f.at("samples").get<uint64_t>(), last) << "functions are listed largest first";
      last = f.at("samples").get<uint64_t>();
    }
    EXPECT_LE(b.at("samples").get<uint64_t>(), previous) << "binaries are listed largest first";
    previous = b.at("samples").get<uint64_t>();
  }

  // The text report: the collection's figures, every binary, every function with its count.
  const ProfcollectRun as_text = run_profcollect({"report", out.string()});
  ASSERT_EQ(as_text.run.exit_code, 0) << as_text.describe();
  const std::string& text = as_text.run.out;
  const auto has_line = [&text](const std::string& label, uint64_t value) {
    for (const auto& line : split_lines(text)) {
      std::istringstream words(line);
      std::string word;
      std::vector<std::string> w;
      while (words >> word) w.push_back(word);
      for (size_t i = 0; i + 1 < w.size(); ++i)
        if (w[i] == label && w[i + 1] == std::to_string(value)) return true;
    }
    return false;
  };
  EXPECT_TRUE(has_line("samples", collection.at("samples").get<uint64_t>())) << text;
  EXPECT_TRUE(has_line("lost", collection.at("lost").get<uint64_t>())) << text;
  EXPECT_TRUE(has_line("mapped", collection.at("mapped").get<uint64_t>())) << text;
  for (const auto& [dir, e] : expected) {
    EXPECT_NE(text.find(dir), std::string::npos) << text;
    EXPECT_NE(text.find(e.meta.at("path").get<std::string>()), std::string::npos) << text;
    for (const auto& [function, n] : e.fdata.per_function()) {
      bool listed = false;
      for (const auto& line : split_lines(text)) {
        std::istringstream words(line);
        uint64_t count = 0;
        std::string share, name;
        if (words >> count >> share >> name && name == function && count == n) listed = true;
      }
      EXPECT_TRUE(listed) << "no line '" << n << " ... " << function << "' in:\n" << text;
    }
  }
}

TEST_F(LiveReportTest, DamagedOrForeignDirectoriesAreRefused) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  const ProfcollectRun run =
      run_profcollect({"-q", "-o", out.string(), "--", spin.string(), "a", "0.3"});
  ASSERT_EQ(run.run.exit_code, 0) << run.describe();
  const auto dirs = profile_dirs(out, "live_spin");
  ASSERT_EQ(dirs.size(), 1u) << run.describe();

  // A damaged fdata: the report says which file, and fails.
  write_file(dirs[0] / "bolt.fdata", "no_lbr cpu-clock:\n1 spin_a zz 3\n");
  const ProfcollectRun damaged = run_profcollect({"report", out.string()});
  EXPECT_NE(damaged.run.exit_code, 0) << damaged.describe();
  EXPECT_NE((damaged.run.out + damaged.run.err).find("bolt.fdata"), std::string::npos)
      << damaged.describe();

  // A directory with nothing of ours.
  fs::create_directory(tmp / "empty");
  const ProfcollectRun empty = run_profcollect({"report", (tmp / "empty").string()});
  EXPECT_NE(empty.run.exit_code, 0) << empty.describe();
  EXPECT_NE(empty.run.err.find("no profcollect output"), std::string::npos) << empty.describe();

  // `perf record --threads` writes a directory too: still read as perf.data.
  if (have_executable("perf")) {
    const fs::path threads = tmp / "threads.data";
    const std::vector<std::string> argv = {
        "perf", "record",      "-q",        "-N", "--buildid-mmap",
        "-e",   "cpu-clock",   "--threads", "-o", threads.string(),
        "--",   spin.string(), "a",         "0.3"};
    const CommandResult recorded = run_command(argv);
    if (recorded.exit_code == 0 && fs::is_directory(threads)) {
      const ProfcollectRun as_perf_data = run_profcollect({"report", threads.string(), "--json"});
      ASSERT_EQ(as_perf_data.run.exit_code, 0) << as_perf_data.describe();
      const json j = json::parse(as_perf_data.run.out, nullptr, false);
      ASSERT_FALSE(j.is_discarded());
      EXPECT_EQ(j.value("kind", std::string()), "recording")
          << "not the perf.data report: " << j.dump(2);
      EXPECT_GT(j.value("samples", uint64_t{0}), 0u);
    }
  }
}

// An SPE collection's counts (collection.json's "arm_spe", written by the perf engine when it
// reads an SPE AUX area; no SPE hardware here, so they are put into a real collection's file):
// the report prints them as the file holds them.
TEST_F(LiveReportTest, ReportShowsTheSpeCountsOfTheCollection) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  const ProfcollectRun run =
      run_profcollect({"-q", "-o", out.string(), "--", spin.string(), "a", "0.2"});
  ASSERT_EQ(run.run.exit_code, 0) << run.describe();
  nlohmann::ordered_json collection =
      nlohmann::ordered_json::parse(read_file(out / "collection.json"));
  collection["arm_spe"] = {
      {"aux_records", 31},   {"aux_bytes", 65536},    {"aux_truncated", 2},
      {"aux_partial", 3},    {"aux_collisions", 5},   {"restarts_after_truncation", 2},
      {"records", 1021},     {"taken_branches", 407}, {"records_dropped", 7},
      {"bytes_skipped", 11}, {"threads_unknown", 13}};
  write_file(out / "collection.json", collection.dump(2));
  const ProfcollectRun report = run_profcollect({"report", out.string()});
  ASSERT_EQ(report.run.exit_code, 0) << report.describe();
  EXPECT_NE(
      report.run.out.find(
          "SPE AUX records                        31  (65536 bytes; 2 truncated, 2 restarts after "
          "truncation, 3 partial, 5 collision)"),
      std::string::npos)
      << report.run.out;
  EXPECT_NE(
      report.run.out.find(
          "SPE records                          1021  (407 taken branches; 7 dropped, 11 bytes "
          "skipped, 13 without a thread)"),
      std::string::npos)
      << report.run.out;
}

}  // namespace
}  // namespace profcollect::test
