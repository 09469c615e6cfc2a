// The daemon's configuration file: every key's default and spelling, and for every kind of
// error (TOML syntax, unknown key, wrong type, bad value, keys that exclude each other) a
// refusal naming the file, the line and the key.
#include "collector/service/daemon_config.h"

#include <gtest/gtest.h>

#include <string>

namespace profcollect {
namespace {

using namespace std::chrono_literals;

// The message parse_daemon_config refuses `text` with; "" when it accepts it.
std::string refusal(const std::string& text) {
  try {
    (void)parse_daemon_config(text, "/etc/p.toml");
  } catch (const DaemonConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(DaemonConfig, AnEmptyFileGivesTheDefaults) {
  const DaemonConfig c = parse_daemon_config("", "f.toml");
  EXPECT_EQ(c.output_dir, "/var/lib/profcollect");
  EXPECT_EQ(c.socket, "/run/profcollect/ctl");
  EXPECT_EQ(c.event, "auto");
  EXPECT_FALSE(c.frequency);
  EXPECT_FALSE(c.period);
  EXPECT_FALSE(c.branch_stacks);
  EXPECT_EQ(c.flush_interval, 60s);
  EXPECT_FALSE(c.schedule);
  EXPECT_TRUE(c.binaries.empty());
  EXPECT_TRUE(c.exclude.empty());
  EXPECT_FALSE(c.kernel);
  EXPECT_FALSE(c.max_disk_bytes);
  EXPECT_FALSE(c.retention_days);
  EXPECT_EQ(c.engine, "perf");
  EXPECT_EQ(c.allowed_group, "");
}

TEST(DaemonConfig, EveryKeyIsRead) {
  const DaemonConfig c = parse_daemon_config(R"(
output_dir = "/srv/prof"
socket = "/run/p/ctl"
event = "cpu-clock"
frequency = 999
branch_stacks = false
flush_interval = "30s"
schedule = { on = "2s", every = "10min" }
binaries = ["^/usr/bin/", "libfoo\\.so"]
exclude = ["/tmp/"]
kernel = true
max_disk_mb = 512
retention_days = 14
engine = "bpf"
allowed_group = "root"
)",
                                             "f.toml");
  EXPECT_EQ(c.output_dir, "/srv/prof");
  EXPECT_EQ(c.engine, "bpf");
  EXPECT_EQ(parse_daemon_config("engine = \"auto\"", "f.toml").engine, "auto");
  EXPECT_EQ(c.socket, "/run/p/ctl");
  EXPECT_EQ(c.event, "cpu-clock");
  EXPECT_EQ(c.frequency, 999u);
  EXPECT_EQ(c.flush_interval, 30s);
  ASSERT_TRUE(c.schedule);
  EXPECT_EQ(c.schedule->on, 2s);
  EXPECT_EQ(c.schedule->every, 10min);
  EXPECT_EQ(c.binaries, (std::vector<std::string>{"^/usr/bin/", "libfoo\\.so"}));
  EXPECT_EQ(c.exclude, (std::vector<std::string>{"/tmp/"}));
  EXPECT_TRUE(c.kernel);
  EXPECT_EQ(c.max_disk_bytes, uint64_t{512} << 20);
  EXPECT_EQ(c.retention_days, 14u);
  EXPECT_EQ(c.allowed_group, "root");
}

TEST(DaemonConfig, TheDiskBudgetMayBeAFractionOfAMegabyte) {
  EXPECT_EQ(parse_daemon_config("max_disk_mb = 0.5", "f").max_disk_bytes, uint64_t{1} << 19);
  EXPECT_EQ(parse_daemon_config("max_disk_mb = 0.0625", "f").max_disk_bytes, uint64_t{65536});
  EXPECT_EQ(parse_daemon_config("max_disk_mb = 3", "f").max_disk_bytes, uint64_t{3} << 20);
}

TEST(DaemonConfig, DurationsTakeUnitsOrWholeSeconds) {
  EXPECT_EQ(parse_daemon_config("flush_interval = 90", "f").flush_interval, 90s);
  EXPECT_EQ(parse_daemon_config("flush_interval = \"250ms\"", "f").flush_interval, 250ms);
  EXPECT_EQ(parse_daemon_config("flush_interval = \"2h\"", "f").flush_interval, 2h);
  EXPECT_FALSE(parse_daemon_config("schedule = \"continuous\"", "f").schedule);
  EXPECT_EQ(parse_duration("1d"), std::chrono::milliseconds(86'400'000));
  EXPECT_FALSE(parse_duration("2 s"));
  EXPECT_FALSE(parse_duration("s"));
  EXPECT_FALSE(parse_duration("-1s"));
  EXPECT_FALSE(parse_duration("99999999999999999999s"));
}

TEST(DaemonConfig, TomlSyntaxErrorsNameFileAndLine) {
  EXPECT_EQ(refusal("event = \"cycles\"\nfrequency = = 3\n").rfind("/etc/p.toml:2: ", 0), 0u)
      << refusal("event = \"cycles\"\nfrequency = = 3\n");
  EXPECT_EQ(refusal("\n\nevent = \"cycles\"\nevent = \"cycles\"\n").rfind("/etc/p.toml:4: ", 0),
            0u);
}

TEST(DaemonConfig, AnUnknownKeyIsRefusedWithItsLine) {
  EXPECT_EQ(refusal("event = \"cycles\"\n\nfrequncy = 4000\n"),
            "/etc/p.toml:3: frequncy: unknown key");
  EXPECT_EQ(refusal("[daemon]\nevent = \"cycles\"\n"), "/etc/p.toml:1: daemon: unknown key");
  EXPECT_EQ(refusal("schedule = { on = \"1s\", evry = \"1min\" }"),
            "/etc/p.toml:1: schedule.evry: unknown key (schedule takes on and every)");
}

TEST(DaemonConfig, AWrongTypeIsRefusedWithItsLineAndKey) {
  EXPECT_EQ(refusal("\nfrequency = \"4000\"\n"),
            "/etc/p.toml:2: frequency: expected a whole number, found a string");
  EXPECT_EQ(refusal("branch_stacks = 1"),
            "/etc/p.toml:1: branch_stacks: expected true or false, found an integer");
  EXPECT_EQ(refusal("output_dir = 3"),
            "/etc/p.toml:1: output_dir: expected a string, found an integer");
  EXPECT_EQ(refusal("binaries = \"/usr/bin\""),
            "/etc/p.toml:1: binaries: expected an array of regular expressions, found a string");
  EXPECT_EQ(refusal("exclude = [\"a\", 3]"),
            "/etc/p.toml:1: exclude: expected a string, found an integer");
  EXPECT_EQ(refusal("kernel = \"yes\""),
            "/etc/p.toml:1: kernel: expected true or false, found a string");
  EXPECT_EQ(refusal("flush_interval = 1.5"),
            "/etc/p.toml:1: flush_interval: expected a duration such as \"2s\", found a "
            "floating-point number");
  EXPECT_EQ(refusal("schedule = 3"),
            "/etc/p.toml:1: schedule: expected \"continuous\" or a table, found an integer");
  EXPECT_EQ(refusal("max_disk_mb = true"),
            "/etc/p.toml:1: max_disk_mb: expected a number, found a boolean");
  EXPECT_EQ(refusal("max_disk_mb = 0.0001"),
            "/etc/p.toml:1: max_disk_mb: 0.0001 is out of range [0.000976562, 1.09951e+12]");
  EXPECT_EQ(refusal("max_disk_mb = -1"),
            "/etc/p.toml:1: max_disk_mb: -1 is out of range [0.000976562, 1.09951e+12]");
  EXPECT_EQ(refusal("max_disk_mb = nan"),
            "/etc/p.toml:1: max_disk_mb: nan is out of range [0.000976562, 1.09951e+12]");
}

TEST(DaemonConfig, ABadValueIsRefusedWithItsLineAndKey) {
  EXPECT_EQ(refusal("frequency = 0"), "/etc/p.toml:1: frequency: 0 is out of range [1, 1000000]");
  EXPECT_EQ(refusal("period = -5"),
            "/etc/p.toml:1: period: -5 is out of range [1, 4611686018427387904]");
  EXPECT_EQ(refusal("output_dir = \"relative/dir\""),
            "/etc/p.toml:1: output_dir: must be an absolute path");
  EXPECT_EQ(refusal("socket = \"/" + std::string(120, 's') + "\"")
                .rfind("/etc/p.toml:1: socket: longer than", 0),
            0u);
  EXPECT_EQ(refusal("flush_interval = \"2 weeks\""),
            "/etc/p.toml:1: flush_interval: \"2 weeks\" is not a duration (e.g. \"500ms\", \"2s\", "
            "\"10min\", \"1h\")");
  EXPECT_EQ(refusal("flush_interval = \"10ms\""),
            "/etc/p.toml:1: flush_interval: must be between 100ms and a year");
  EXPECT_EQ(refusal("flush_interval = 0"),
            "/etc/p.toml:1: flush_interval: 0 seconds is out of range");
  EXPECT_EQ(refusal("schedule = \"sometimes\""),
            "/etc/p.toml:1: schedule: \"sometimes\": expected \"continuous\" or { on = \"2s\", "
            "every = \"10min\" }");
  EXPECT_EQ(refusal("schedule = { on = \"10min\", every = \"2s\" }"),
            "/etc/p.toml:1: schedule: on must be shorter than every");
  EXPECT_EQ(refusal("schedule = { on = \"2s\" }"),
            "/etc/p.toml:1: schedule: a duty cycle needs both on and every");
  EXPECT_EQ(refusal("binaries = [\"ok\", \"(unclosed\"]")
                .rfind("/etc/p.toml:1: binaries: \"(unclosed\" is not a regular expression", 0),
            0u);
  // A back-reference or a count whose number has more digits than a long holds: libstdc++ 12's
  // regex compiler would overflow reading it (undefined behaviour), so it never gets there.
  EXPECT_EQ(
      refusal("binaries = ['\\5555555555555555555555']")
          .rfind(
              "/etc/p.toml:1: binaries: \"\\5555555555555555555555\" is not a regular expression",
              0),
      0u);
  EXPECT_EQ(
      refusal("exclude = ['a{99999999999999999999}']")
          .rfind("/etc/p.toml:1: exclude: \"a{99999999999999999999}\" is not a regular expression",
                 0),
      0u);
  EXPECT_EQ(refusal("engine = \"ebpf\""),
            "/etc/p.toml:1: engine: \"ebpf\": expected \"perf\", \"bpf\" or \"auto\"");
  EXPECT_EQ(refusal("engine = \"dtrace\""),
            "/etc/p.toml:1: engine: \"dtrace\": expected \"perf\", \"bpf\" or \"auto\"");
  EXPECT_EQ(refusal("allowed_group = \"no-such-group-here\""),
            "/etc/p.toml:1: allowed_group: no group named \"no-such-group-here\"");
  EXPECT_EQ(refusal("retention_days = 0"),
            "/etc/p.toml:1: retention_days: 0 is out of range [1, 36500]");
  const std::string event = refusal("\n\nevent = \"lbrr\"");
  EXPECT_EQ(event.rfind("/etc/p.toml:3: event: ", 0), 0u) << event;
}

TEST(DaemonConfig, FrequencyAndPeriodExcludeEachOther) {
  EXPECT_EQ(refusal("frequency = 100\nperiod = 1000\n"),
            "/etc/p.toml:2: period: frequency and period exclude each other: set one");
}

TEST(DaemonConfig, AFileThatCannotBeReadIsNamed) {
  try {
    (void)load_daemon_config("/nonexistent/profcollect.toml");
    FAIL() << "read a file that does not exist";
  } catch (const DaemonConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/profcollect.toml: cannot be read: No such file or directory");
  }
}

TEST(DaemonConfig, FormatsAreNamesOfTheRegistryAndWrittenByDefaultAsLiveCollectionDoes) {
  EXPECT_EQ(parse_daemon_config("", "f").formats,
            (std::vector<std::string>{"bolt", "preagg", "bolt-inferred", "autofdo"}));
  EXPECT_EQ(
      parse_daemon_config("formats = [\"autofdo\", \"unsymbolized\", \"autofdo\"]", "f").formats,
      (std::vector<std::string>{"autofdo", "unsymbolized"}));
  EXPECT_EQ(refusal("\nformats = [\"bolt\", \"perfdata\"]"),
            "/etc/p.toml:2: formats: \"perfdata\" is not one of bolt, preagg, bolt-inferred, "
            "autofdo, unsymbolized, propeller");
  EXPECT_EQ(refusal("formats = []"),
            "/etc/p.toml:1: formats: name at least one of bolt, preagg, bolt-inferred, autofdo, "
            "unsymbolized, propeller");
  EXPECT_EQ(refusal("formats = \"bolt\""),
            "/etc/p.toml:1: formats: expected an array of format names, found a string");
  // Another set of formats is another session: a reload restarts it.
  EXPECT_FALSE(
      parse_daemon_config("", "f").same_session(parse_daemon_config("formats = [\"bolt\"]", "f")));
}

TEST(DaemonConfig, SessionChangesAreToldFromOthers) {
  const DaemonConfig a = parse_daemon_config("frequency = 100", "f");
  EXPECT_TRUE(a.same_session(parse_daemon_config("frequency = 100\nflush_interval = 5", "f")));
  EXPECT_FALSE(a.same_session(parse_daemon_config("frequency = 200", "f")));
  EXPECT_FALSE(a.same_session(parse_daemon_config("frequency = 100\nexclude = [\"x\"]", "f")));
}

}  // namespace
}  // namespace profcollect

namespace profcollect {
namespace {

// The example configuration shipped beside the unit is valid and states the defaults.
TEST(DaemonConfig, TheExampleFileIsValidAndHoldsTheDefaults) {
  const DaemonConfig example =
      load_daemon_config(PROFCOLLECT_SOURCE_DIR "/systemd/profcollect.toml.example");
  const DaemonConfig defaults;
  EXPECT_TRUE(example.same_session(defaults));
  EXPECT_EQ(example.socket, defaults.socket);
  EXPECT_EQ(example.flush_interval, defaults.flush_interval);
  EXPECT_EQ(example.schedule, defaults.schedule);
  EXPECT_EQ(example.kernel, defaults.kernel);
  EXPECT_EQ(example.allowed_group, defaults.allowed_group);
  EXPECT_EQ(example.max_disk_bytes, defaults.max_disk_bytes);
  EXPECT_EQ(example.retention_days, defaults.retention_days);
}

}  // namespace
}  // namespace profcollect
