// The line a live collection ends with: its counts must be those of the files it wrote (the
// profiled binaries were counted after the final flush had released them: "in 0 profiled
// binaries" while collection.json said 1), and "profiles in DIR" is said only when every
// profile was written. Each message is one short line (the no-branch-hardware note was ~400
// characters; a binary without debug info ~600, once per binary).
#include <gtest/gtest.h>
#include <signal.h>

#include <sstream>

#include "tests/integration/convert_judges.h"
#include "tests/integration/cpu_time.h"
#include "tests/integration/live_support.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

class LiveSummaryTest : public LiveFixtureTest {};

// The line of `err` that starts with "profcollect: " and holds `what`.
std::string line_with(const std::string& err, const std::string& what) {
  for (const std::string& line : split_lines(err))
    if (line.find(what) != std::string::npos) return line;
  return {};
}

// Every line at most 100 characters, not counting the paths it names (the user's to choose).
void expect_short_lines(const std::string& err) {
  for (const std::string& line : split_lines(err)) {
    size_t length = 0;
    std::istringstream words(line);
    for (std::string word; words >> word;)
      if (word.find('/') == std::string::npos) length += word.size() + 1;
    EXPECT_LE(length, 100u) << line;
  }
}

TEST_F(LiveSummaryTest, CommandAndPidModesCountTheBinariesTheyWrote) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  // A command.
  const ProfcollectRun command =
      run_profcollect({"-e", "cpu-clock", "-F", "1000", "-o", (tmp / "cmd").string(), "--",
                       spin.string(), "a", "0.2"});
  ASSERT_EQ(command.run.exit_code, 0) << command.describe();
  const nlohmann::json collection = read_json_file(tmp / "cmd" / "collection.json");
  ASSERT_EQ(collection.value("binaries", 0u), 1u) << collection.dump(2);
  const std::string summary = line_with(command.run.err, " samples, ");
  EXPECT_NE(summary.find(" in 1 profiled binary, "), std::string::npos) << command.describe();
  EXPECT_NE(summary.find("; profiles in " + (tmp / "cmd").string()), std::string::npos)
      << command.describe();
  expect_short_lines(command.run.err);

  // A running process.
  BackgroundProcess target = start_target(spin, {"b", "0"});
  BackgroundProcess collector =
      start_profcollect({"-e", "cpu-clock", "-F", "1000", "--pid", std::to_string(target.pid()),
                         "-o", (tmp / "pid").string()});
  ASSERT_TRUE(wait_until([&] { return collector.err().find("collecting") != std::string::npos; },
                         kPatience))
      << collector.describe();
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), std::chrono::milliseconds(200), kPatience));
  collector.signal(SIGINT);
  ASSERT_EQ(collector.wait(kPatience), std::optional<int>(0)) << collector.describe();
  EXPECT_NE(line_with(collector.err(), " samples, ").find(" in 1 profiled binary, "),
            std::string::npos)
      << collector.describe();
  EXPECT_EQ(read_json_file(tmp / "pid" / "collection.json").value("binaries", 0u), 1u);
  expect_short_lines(collector.err());
}

TEST_F(LiveSummaryTest, AFailedFinalFlushDoesNotSayWhereTheProfilesAre) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  // A link planted under the binary's directory name: its profile cannot be written.
  fs::create_directories(out);
  fs::create_directories(tmp / "elsewhere");
  fs::create_directory_symlink(tmp / "elsewhere", out / ("live_spin-" + readelf_build_id(spin)));
  const ProfcollectRun run = run_profcollect(
      {"-e", "cpu-clock", "-F", "1000", "-o", out.string(), "--", spin.string(), "a", "0.2"});
  EXPECT_EQ(run.run.exit_code, 1) << run.describe();
  EXPECT_NE(run.run.err.find("flush failed"), std::string::npos) << run.describe();
  EXPECT_EQ(run.run.err.find("profiles in"), std::string::npos) << run.describe();
  EXPECT_NE(line_with(run.run.err, " samples, ").find(" in 1 profiled binary, "), std::string::npos)
      << run.describe();
  EXPECT_TRUE(fs::is_empty(tmp / "elsewhere"));
}

TEST_F(LiveSummaryTest, BinariesWithoutDebugInfoAreCountedInOneLineAndListedInCollectionJson) {
  // Debian's sort and gzip are stripped (no -dbgsym package is installed for them): each runs
  // 0.2 s of its own CPU time under -a, most of it in its own code. One line says them all.
  TempDir tmp;
  const fs::path out = tmp / "out", input = tmp / "lines";
  {
    std::string text;
    for (uint64_t i = 0; i < 3000000; ++i) text += std::to_string(i * 7919 % 1000003) + " line\n";
    write_file(input, text);
  }
  BackgroundProcess collector = start_profcollect(
      {"-a", "-e", "cpu-clock", "-F", "1000", "-o", out.string(), "--flush-interval", "3600"});
  ASSERT_TRUE(wait_until([&] { return collector.err().find("collecting") != std::string::npos; },
                         kPatience))
      << collector.describe();
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"sort", "-S", "512M", "-o", (tmp / "sorted").string(),
                                 input.string()},
        std::vector<std::string>{"gzip", "-1", "-k", "-f", input.string()}}) {
    BackgroundProcess p = BackgroundProcess::start(argv);
    ASSERT_TRUE(wait_for_cpu_time(p.pid(), std::chrono::milliseconds(200), kPatience))
        << p.describe();
  }
  collector.signal(SIGINT);
  ASSERT_EQ(collector.wait(kPatience), std::optional<int>(0)) << collector.describe();
  const std::string err = collector.err();
  const nlohmann::json collection = read_json_file(out / "collection.json");
  ASSERT_TRUE(collection.contains("image_warnings")) << collection.dump(2);
  const nlohmann::json& no_debug = collection["image_warnings"]["no_debug_info"];
  const uint64_t count = no_debug.value("count", uint64_t{0});
  ASSERT_GE(count, 2u) << collection.dump(2);
  EXPECT_EQ(no_debug["binaries"].size(), count);
  for (const auto& b : no_debug["binaries"]) {
    EXPECT_FALSE(b.value("path", "").empty());
    EXPECT_FALSE(b.value("reason", "").empty());
  }
  const std::string said = std::to_string(count) +
                           " binaries without debug info: no AutoFDO profile; see collection.json";
  size_t lines = 0;
  for (const std::string& line : split_lines(err))
    lines += line.find("no AutoFDO profile") != std::string::npos;
  EXPECT_EQ(lines, 1u) << err;
  EXPECT_NE(err.find(said), std::string::npos) << err;
  expect_short_lines(err);
}

}  // namespace
}  // namespace profcollect::test
