// The command line speaks its users' dialects: perf record's (`-p PID`, `-e cycles:u`, `-F max`)
// for live collection and perf2bolt's (`-perfdata=FILE`, `-ba`, `-pid=N`) for convert, and
// refuses what it does not do with the reason (exit 2). Its help shows no option library type
// tags, and `report --json` has one schema for a recording and for an output directory.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "collector/host/perf_permissions.h"
#include "tests/integration/busy_program.h"
#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& path) { return json::parse(read_file(path), nullptr, false); }

// A usage error: exit 2, one line on stderr, naming every word of `named`.
void expect_usage_error(const ProfcollectRun& r, const std::vector<std::string>& named) {
  EXPECT_EQ(r.run.exit_code, 2) << r.describe();
  const auto lines = split_lines(r.run.err);
  ASSERT_EQ(lines.size(), 1u) << r.describe();
  EXPECT_TRUE(lines[0].starts_with("profcollect: error: ")) << lines[0];
  for (const std::string& word : named)
    EXPECT_NE(lines[0].find(word), std::string::npos) << word << ": " << lines[0];
}

class CliPerfRecordDialect : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    busy_ = build_busy_program(tmp_.path(), error);
    if (busy_.empty()) GTEST_SKIP() << "no C compiler: " << error;
  }
  // Collects the busy program for a moment, attached with `args` naming it; the run's result.
  ProfcollectRun collect(const fs::path& out, std::vector<std::string> args) {
    ChildProcess child = ChildProcess::spawn(busy_);
    std::vector<std::string> argv = {"-q", "-o", out.string(), "--duration", "0.5"};
    for (std::string& a : args) argv.push_back(a == "PID" ? std::to_string(child.pid()) : a);
    return run_profcollect(argv);
  }
  TempDir tmp_;
  fs::path busy_;
};

TEST_F(CliPerfRecordDialect, ShortPidAttachesAsLongPid) {
  const fs::path out = tmp_ / "out";
  const ProfcollectRun r = collect(out, {"-p", "PID", "-e", "cpu-clock"});
  ASSERT_EQ(r.run.exit_code, 0) << r.describe();
  const json collection = read_json(out / "collection.json");
  ASSERT_FALSE(collection.is_discarded()) << r.describe();
  EXPECT_GT(collection.value("samples", uint64_t{0}), 0u) << collection.dump(2);

  expect_usage_error(run_profcollect({"-p", "12x", "-e", "cpu-clock"}), {"--pid", "12x"});
}

TEST_F(CliPerfRecordDialect, PrivilegeModifiersNameTheEvent) {
  // Kernel samples (k) need the right to them; user samples (u) do not.
  const fs::path out = tmp_ / "out";
  const ProfcollectRun r = collect(out, {"-p", "PID", "-e", "cpu-clock:u"});
  ASSERT_EQ(r.run.exit_code, 0) << r.describe();
  const json collection = read_json(out / "collection.json");
  EXPECT_EQ(collection.value("event", std::string()), "cpu-clock:u") << collection.dump(2);
}

TEST(CliPerfRecordModifiers, ModifiersThatAreNotTakenAreRefusedByName) {
  // Checked before anything starts: -a with an output directory that cannot be made (not even
  // by root) fails with exit 1 if the event is taken; the timeout ends a run that started.
  auto live = [](const std::string& event) {
    const std::vector<std::string> argv = {profcollect_exe().string(), "-a", "-o",
                                           "/proc/no/such/dir",        "-e", event};
    RunOptions options;
    options.timeout = std::chrono::seconds(60);
    ProfcollectRun r{run_command(argv, options), argv};
    EXPECT_FALSE(r.run.timed_out) << r.describe() << " started collecting";
    return r;
  };
  expect_usage_error(live("cycles:p"), {"cycles:p", "'p'"});
  expect_usage_error(live("cpu-clock:uH"), {"cpu-clock:uH", "'H'"});
  expect_usage_error(live("cpu-clock:"), {"cpu-clock:"});
  expect_usage_error(live("lbr:u"), {"lbr:u"});
  expect_usage_error(live("auto:k"), {"auto:k"});
  const bool kernel = PerfPermissions::of_this_process().may_sample_kernel();
  for (const char* taken : {"cpu-clock:u", "cpu-clock:k", "cpu-clock:uk"}) {
    if (!kernel && std::string(taken) != "cpu-clock:u") continue;
    const ProfcollectRun r = live(taken);
    EXPECT_EQ(r.run.exit_code, 1) << r.describe();
    EXPECT_NE(r.run.err.find("/proc/no/such/dir"), std::string::npos) << r.describe();
  }
}

TEST_F(CliPerfRecordDialect, FrequencyMaxIsTheKernelsLimit) {
  std::ifstream sysctl("/proc/sys/kernel/perf_event_max_sample_rate");
  uint64_t limit = 0;
  if (!(sysctl >> limit) || limit == 0)
    GTEST_SKIP() << "kernel.perf_event_max_sample_rate cannot be read";
  const fs::path out = tmp_ / "out";
  const ProfcollectRun r = collect(out, {"-p", "PID", "-e", "cpu-clock", "-F", "max"});
  ASSERT_EQ(r.run.exit_code, 0) << r.describe();
  const json collection = read_json(out / "collection.json");
  EXPECT_EQ(collection.value("frequency_hz", uint64_t{0}), std::min<uint64_t>(limit, 1000000))
      << collection.dump(2);
}

class CliPerf2boltDialect : public ConvertFixtureTest {
 protected:
  // convert of the fixture with `args` for the input and options; the profile written.
  std::string converted(const std::vector<std::string>& args, const std::string& name) {
    const fs::path out = tmp_ / name;
    std::vector<std::string> argv = {"convert", "-q", "-o", out.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(fixture("hot_gcc").string());
    const ProfcollectRun r = run_profcollect(argv);
    EXPECT_EQ(r.run.exit_code, 0) << r.describe();
    return read_file(out);
  }
  TempDir tmp_;
};

TEST_F(CliPerf2boltDialect, OneDashLongOptionsAreTakenAsPerf2boltMeansThem) {
  const std::string data = fixture("hot_gcc.data").string();
  const std::string plain = converted({"-p", data}, "plain.fdata");
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(converted({"-perfdata=" + data}, "equals.fdata"), plain);
  EXPECT_EQ(converted({"-perfdata", data}, "separate.fdata"), plain);
  EXPECT_EQ(converted({"--perfdata=" + data}, "two_dashes.fdata"), plain);
  const std::string no_lbr = converted({"-p", data, "--nl"}, "nl.fdata");
  EXPECT_EQ(converted({"-p", data, "-ba"}, "ba.fdata"), no_lbr);
  EXPECT_EQ(converted({"-p", data, "-nl", "-ignore-build-id", "-spe"}, "several.fdata"), no_lbr);
}

TEST_F(CliPerf2boltDialect, Perf2boltOptionsNotDoneAreRefusedWithTheReason) {
  const std::string data = fixture("hot_gcc.data").string();
  const fs::path out = tmp_ / "never.fdata";
  auto convert = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {"convert", "-p", data, "-o", out.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(fixture("hot_gcc").string());
    return run_profcollect(argv);
  };
  expect_usage_error(convert({"-w", (tmp_ / "x.yaml").string()}), {"-w", "YAML"});
  expect_usage_error(convert({"--profile-format=yaml"}), {"--profile-format", "YAML"});
  expect_usage_error(convert({"-pa"}), {"-pa", "pre-aggregated"});
  expect_usage_error(convert({"-itrace=l"}), {"-itrace", "Intel PT"});
  expect_usage_error(convert({"-nl=1"}), {"-nl"});
  // Not CLI11's -p with the value "erfdta=...": an unknown option, and the one it meant.
  expect_usage_error(convert({"-perfdta=" + data}), {"-perfdta", "did you mean -perfdata?"});
  EXPECT_FALSE(fs::exists(out));
}

// ---- help --------------------------------------------------------------------------------------

std::string help_of(const std::vector<std::string>& command) {
  std::vector<std::string> argv = command;
  argv.push_back("--help");
  const ProfcollectRun r = run_profcollect(argv);
  EXPECT_EQ(r.run.exit_code, 0) << r.describe();
  return r.run.out;
}

TEST(CliHelp, NoTypeTagsAndTheLiveFooterOnlyAtTheTop) {
  const std::vector<std::vector<std::string>> commands = {
      {}, {"convert"}, {"report"}, {"daemon"}, {"ctl"}, {"kernel"}, {"merge"}, {"doctor"}};
  for (const auto& command : commands) {
    const std::string help = help_of(command);
    const std::string which = command.empty() ? "profcollect" : command[0];
    ASSERT_FALSE(help.empty()) << which;
    // CLI11's type names and its validators' descriptions ("UINT:INT in [1 to 1000000]").
    for (const char* tag : {"TEXT", "UINT", "INT ", "INT:", "FLOAT", "in [", ":{", "BOOLEAN"})
      EXPECT_EQ(help.find(tag), std::string::npos)
          << which << " --help shows the type tag " << tag << ":\n"
          << help;
    const bool footer = help.find("Live collection (no subcommand)") != std::string::npos;
    EXPECT_EQ(footer, command.empty()) << which << " --help:\n" << help;
  }
  const std::string top = help_of({});
  for (const char* said : {"spe", "cycles:u", "-p,--pid", "max"})
    EXPECT_NE(top.find(said), std::string::npos) << said << " is not in the help:\n" << top;
}

// ---- report --json -----------------------------------------------------------------------------

// The keys both reports have, with the JSON type each holds.
void expect_shared_schema(const json& j, const std::string& kind) {
  ASSERT_TRUE(j.is_object()) << j;
  EXPECT_EQ(j.value("kind", std::string()), kind) << j.dump(2);
  EXPECT_TRUE(j.at("input").is_string()) << j.dump(2);
  for (const char* key : {"samples", "lost", "throttled"})
    EXPECT_TRUE(j.at(key).is_number_unsigned()) << key << ": " << j.dump(2);
  for (const char* key : {"events", "binaries", "problems"})
    EXPECT_TRUE(j.at(key).is_array()) << key;
  EXPECT_TRUE(j.at("problems").empty()) << j.dump(2);
  ASSERT_FALSE(j.at("binaries").empty()) << j.dump(2);
  for (const json& b : j.at("binaries")) {
    EXPECT_TRUE(b.at("path").is_string()) << b;
    EXPECT_TRUE(b.at("build_id").is_string()) << b;
    EXPECT_TRUE(b.at("samples").is_number_unsigned()) << b;
  }
}

// A recording's report needs the fixtures, a directory's a live collection.
class CliReportSchema : public ConvertFixtureTest {
 protected:
  void SetUp() override {
    ConvertFixtureTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::string error;
    busy_ = build_busy_program(tmp_.path(), error);
    if (busy_.empty()) GTEST_SKIP() << "no C compiler: " << error;
  }
  TempDir tmp_;
  fs::path busy_;
};

TEST_F(CliReportSchema, ReportJsonHasOneSchemaForARecordingAndADirectory) {
  const fs::path out = tmp_ / "out";
  ChildProcess child = ChildProcess::spawn(busy_);
  const ProfcollectRun live = run_profcollect({"-q", "-o", out.string(), "--duration", "0.5", "-p",
                                               std::to_string(child.pid()), "-e", "cpu-clock"});
  ASSERT_EQ(live.run.exit_code, 0) << live.describe();
  const ProfcollectRun of_directory = run_profcollect({"report", "--json", out.string()});
  ASSERT_EQ(of_directory.run.exit_code, 0) << of_directory.describe();
  const json dir_report = json::parse(of_directory.run.out, nullptr, false);
  expect_shared_schema(dir_report, "collection");
  EXPECT_EQ(dir_report.at("input"), out.string());
  const json collection = read_json(out / "collection.json");
  EXPECT_EQ(dir_report.at("samples"), collection.at("samples"));
  EXPECT_EQ(dir_report.at("events"), json::array({collection.at("event")}));

  const fs::path data = fixture("hot_gcc.data");
  const ProfcollectRun of_recording = run_profcollect({"report", "--json", data.string()});
  ASSERT_EQ(of_recording.run.exit_code, 0) << of_recording.describe();
  const json rec_report = json::parse(of_recording.run.out, nullptr, false);
  expect_shared_schema(rec_report, "recording");
  EXPECT_EQ(rec_report.at("input"), data.string());
}

}  // namespace
}  // namespace profcollect::test
