// Every numeric option refuses what it cannot mean: negative, NaN, infinite, out-of-range and
// non-decimal values are usage errors -- exit 2, one stderr line `profcollect: error: ...` that
// names the option -- before anything is collected or read. A misspelled option gets a
// suggestion, and perf2bolt's `-p=FILE` / `-o=FILE` spellings work.
#include <gtest/gtest.h>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

struct BadValue {
  std::vector<std::string> args;  // a whole command line but for the bad value's option
  std::string option;             // what the message must name
};

// A collection that would start if its option were taken: the bounded timeout then fails the
// test instead of hanging it.
std::vector<BadValue> bad_values() {
  std::vector<BadValue> table;
  auto live = [&](const std::string& option, const std::string& value, const std::string& named) {
    table.push_back(
        {{"-a", "-e", "cpu-clock", "-o", "/nonexistent-dir/out", option, value}, named});
  };
  for (const char* v : {"-5", "0", "nan", "inf", "1e400", "2000000", "12x", "0x10", ""})
    live("-F", v, "--freq");
  for (const char* v : {"0", "-1", "99999999999999999999999", "1.5"}) live("-c", v, "--count");
  for (const char* v : {"3", "0", "-8", "4294967296", "1e3"}) live("-m", v, "--mmap-pages");
  for (const char* v : {"inf", "nan", "1e400", "-1", "0", "-inf", "1,5", "31622401"})
    live("--flush-interval", v, "--flush-interval");
  for (const char* v : {"-1", "0", "nan", "inf", "1e400"}) live("--duration", v, "--duration");
  for (const char* v : {"-3", "abc", "0", "99999999", "1,-2"}) live("--pid", v, "--pid");
  table.push_back({{"convert", "-p", "x.data", "-o", "x.fdata", "--pid", "-1", "bin"}, "--pid"});
  table.push_back(
      {{"convert", "-p", "x.data", "-o", "x.fdata", "--pid", "4294967297", "bin"}, "--pid"});
  table.push_back({{"report", "x.data", "--top", "-1"}, "--top"});
  table.push_back({{"report", "x.data", "--pid", "nan"}, "--pid"});
  return table;
}

TEST(CliNumericOptions, EveryBadValueIsAUsageErrorNamingTheOption) {
  for (const BadValue& bad : bad_values()) {
    std::vector<std::string> argv = {profcollect_exe().string()};
    argv.insert(argv.end(), bad.args.begin(), bad.args.end());
    RunOptions options;
    options.timeout = std::chrono::seconds(60);
    const CommandResult r = run_command(argv, options);
    ASSERT_FALSE(r.timed_out) << command_line(argv) << " started instead of refusing the value";
    EXPECT_EQ(r.exit_code, 2) << r.describe(argv);
    const auto lines = split_lines(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.describe(argv);
    EXPECT_TRUE(lines[0].starts_with("profcollect: error: ")) << lines[0];
    EXPECT_NE(lines[0].find(bad.option), std::string::npos) << lines[0];
    EXPECT_TRUE(r.out.empty()) << r.describe(argv);
  }
}

TEST(CliNumericOptions, RangesAreStatedInTheMessage) {
  const std::vector<std::string> argv = {profcollect_exe().string(), "-a", "-F", "-5", "-o",
                                         "/nonexistent-dir/out"};
  const CommandResult r = run_command(argv);
  EXPECT_NE(r.err.find("1 to 1000000"), std::string::npos) << r.describe(argv);
  const std::vector<std::string> m = {profcollect_exe().string(), "-a", "-m", "3", "-o",
                                      "/nonexistent-dir/out"};
  const CommandResult rm = run_command(m);
  EXPECT_NE(rm.err.find("power of two"), std::string::npos) << rm.describe(m);
}

TEST(CliNumericOptions, GoodValuesAtTheEdgesOfTheRangesAreTaken) {
  // Accepted values reach the collection: here it fails for the output directory (exit 1), not
  // for the values (exit 2).
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"-F", "1"},
                                             {"-F", "1000000"},
                                             {"-c", "1"},
                                             {"-m", "1"},
                                             {"--flush-interval", "0.5"},
                                             {"--duration", "0.001"},
                                             {"--flush-interval", "31622400"}}) {
    std::vector<std::string> argv = {profcollect_exe().string(), "-a", "-e", "cpu-clock", "-o",
                                     "/proc/no/such/dir"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions options;
    options.timeout = std::chrono::seconds(60);
    const CommandResult r = run_command(argv, options);
    EXPECT_EQ(r.exit_code, 1) << r.describe(argv);
    EXPECT_NE(r.err.find("/proc/no/such/dir"), std::string::npos) << r.describe(argv);
  }
}

TEST(CliNumericOptions, MisspelledOptionGetsASuggestion) {
  const std::vector<std::string> argv = {profcollect_exe().string(), "-a", "--flush-intervall",
                                         "5"};
  const CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 2) << r.describe(argv);
  const auto lines = split_lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.describe(argv);
  EXPECT_TRUE(lines[0].starts_with("profcollect: error: ")) << lines[0];
  EXPECT_NE(lines[0].find("did you mean --flush-interval?"), std::string::npos) << lines[0];

  const std::vector<std::string> c = {
      profcollect_exe().string(), "convert", "--perfdat", "x", "-o", "y", "z"};
  const CommandResult rc = run_command(c);
  EXPECT_EQ(rc.exit_code, 2) << rc.describe(c);
  EXPECT_NE(rc.err.find("did you mean --perfdata?"), std::string::npos) << rc.describe(c);
}

class CliPerf2boltSpelling : public ConvertFixtureTest {};

TEST_F(CliPerf2boltSpelling, EqualsSignValuesAreTaken) {
  TempDir tmp;
  const auto with_equals = tmp / "equals.fdata";
  const auto plain = tmp / "plain.fdata";
  const ProfcollectRun a =
      run_profcollect({"convert", "-p=" + fixture("hot_gcc.data").string(),
                       "-o=" + with_equals.string(), "-nl", "-q", fixture("hot_gcc").string()});
  ASSERT_EQ(a.run.exit_code, 0) << a.describe();
  const ProfcollectRun b =
      run_profcollect({"convert", "-p", fixture("hot_gcc.data").string(), "-o", plain.string(),
                       "-nl", "-q", fixture("hot_gcc").string()});
  ASSERT_EQ(b.run.exit_code, 0) << b.describe();
  EXPECT_EQ(read_file(with_equals), read_file(plain));
}

}  // namespace
}  // namespace profcollect::test
