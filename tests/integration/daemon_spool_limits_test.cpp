// Issue 12, acceptance 3: the daemon holds its output directory to max_disk_mb and
// retention_days -- at start, over what earlier runs left, and after every flush -- removing
// binary directories last sampled too long ago, then the least recently sampled until the
// directory fits, each removal logged. The budget is a hard limit: a binary being profiled is
// evicted like any other, and its counts in memory go with its directory.
//
// The many-binary test profiles fourteen distinct programs (tests/fixtures/make_spool_fixtures.sh)
// at once. They run one after another, each for a fixed amount of its CPU time and then asleep
// (mapped, but giving no sample), so that which one was sampled least recently is known from the
// order the test woke them, not from timing. The test measures the directory itself (every
// regular file under it, links not followed), reads each binary's last sample from its
// meta.json, and works out from these alone which directories must go.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>

#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class DaemonSpoolLimitsTest : public LiveFixtureTest {};

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// A binary directory an earlier run would have left: meta.json saying when its binary was last
// sampled, and `bytes` of profile.
void plant(const fs::path& dir, std::chrono::hours age, size_t bytes) {
  fs::create_directories(dir);
  const uint64_t ns = now_ns() - static_cast<uint64_t>(std::chrono::nanoseconds(age).count());
  write_text(dir / "meta.json", "{\"last_sample_ns\": " + std::to_string(ns) + "}\n");
  write_text(dir / "samples.ip", std::string(bytes, '0'));
}

// The sizes of every regular file under `dir`, links not followed: what the budget bounds.
uint64_t bytes_under(const fs::path& dir) {
  uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.symlink_status().type() == fs::file_type::regular) total += fs::file_size(e.path());
  }
  return total;
}

struct BinaryDir {
  uint64_t bytes = 0;
  uint64_t last_sample_ns = 0;
  uint64_t first_sample_ns = 0;
};

// The binary directories under `out` as the test sees them.
std::map<std::string, BinaryDir> binary_dirs(const fs::path& out) {
  std::map<std::string, BinaryDir> dirs;
  for (const auto& e : fs::directory_iterator(out)) {
    if (e.symlink_status().type() != fs::file_type::directory ||
        e.path().filename().string().starts_with("."))
      continue;
    const nlohmann::json meta = read_json_file(e.path() / "meta.json");
    BinaryDir d;
    d.bytes = bytes_under(e.path());
    if (meta.is_object()) {
      d.last_sample_ns = meta.value("last_sample_ns", uint64_t{0});
      d.first_sample_ns = meta.value("first_sample_ns", uint64_t{0});
    }
    dirs[e.path().filename().string()] = d;
  }
  return dirs;
}

// Names, least recently sampled first (ties by name).
std::vector<std::string> by_last_sample(const std::map<std::string, BinaryDir>& dirs) {
  std::vector<std::string> names;
  for (const auto& [name, d] : dirs) names.push_back(name);
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    const uint64_t ta = dirs.at(a).last_sample_ns, tb = dirs.at(b).last_sample_ns;
    return ta != tb ? ta < tb : a < b;
  });
  return names;
}

// How many times `log` says "evicted NAME (".
size_t evictions_said(const std::string& log, const std::string& name) {
  size_t n = 0;
  const std::string needle = "evicted " + name + " (";
  for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) ++n;
  return n;
}

// The line of `log` that says "evicted NAME (", empty when none.
std::string eviction_line(const std::string& log, const std::string& name) {
  const size_t at = log.find("evicted " + name + " (");
  if (at == std::string::npos) return {};
  const size_t begin = log.rfind('\n', at);
  const size_t end = log.find('\n', at);
  return log.substr(begin == std::string::npos ? 0 : begin + 1,
                    end == std::string::npos ? end : end - begin - 1);
}

// One of the fourteen programs, asleep between runs.
struct Program {
  fs::path path;
  std::string directory;  // "<basename>-<build-id>", the build-id as readelf prints it
  std::unique_ptr<BackgroundProcess> process;  // a pointer: programs_ is reordered
  size_t runs = 0;

  // Starts it (the first time) or wakes it, and returns once its run is over and it sleeps
  // again: its last sample was taken before this returns.
  void run_once() {
    if (!process) {
      process = std::make_unique<BackgroundProcess>(start_target(path, {"0.15"}));
    } else {
      process->signal(SIGUSR1);
    }
    ++runs;
    ASSERT_TRUE(wait_until(
        [&] {
          size_t idle = 0;
          for (const std::string& line : split_lines(process->out())) idle += line == "idle";
          return idle >= runs && state() == 'S';
        },
        kPatience))
        << process->describe();
  }
  // Its state in /proc/PID/stat ('S' asleep in sigsuspend once it said "idle").
  char state() const {
    std::ifstream in("/proc/" + std::to_string(process->pid()) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
  }
};

TEST_F(DaemonSpoolLimitsTest, RetentionAndTheDiskBudgetRemoveTheLeastRecentlySampledFirst) {
  TempDir tmp;
  const fs::path out = tmp / "out", socket = tmp / "ctl", config = tmp / "profcollect.toml";
  plant(out / "old-0001", std::chrono::hours(24 * 40), 10'000);    // past retention_days = 30
  plant(out / "older-0002", std::chrono::hours(24 * 3), 700'000);  // the least recently sampled
  plant(out / "newer-0003", std::chrono::hours(24 * 2), 700'000);
  write_text(config, "output_dir = \"" + out.string() + "\"\nsocket = \"" + socket.string() +
                         "\"\nevent = \"cpu-clock\"\nflush_interval = \"1h\"\nretention_days = 30\n"
                         "max_disk_mb = 1\nbinaries = [" +
                         exact_path_pattern(fixture("live_spin")) + "]\n");
  BackgroundProcess target = start_target(fixture("live_spin"), {"a", "0"});
  NotifyListener notify(tmp / "notify");
  BackgroundProcess daemon = start_daemon(config, notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
  // At start, before anything is written: what the earlier runs left is held to the limits.
  EXPECT_FALSE(fs::exists(out / "old-0001")) << daemon.describe();
  EXPECT_FALSE(fs::exists(out / "older-0002")) << daemon.describe();
  EXPECT_TRUE(fs::exists(out / "newer-0003")) << daemon.describe();
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 100ms, kPatience));
  const CtlRun flush = run_ctl(socket, {"flush"});
  ASSERT_EQ(flush.exit_code, 0) << flush.describe();

  // 1.4 MB planted: removing the least recently sampled 700 kB brings it under 1 MiB.
  EXPECT_TRUE(fs::exists(out / "newer-0003")) << daemon.describe();
  EXPECT_EQ(profile_dirs(out, "live_spin").size(), 1u) << "the binary being profiled was removed";
  const std::string log = daemon.err();
  EXPECT_NE(eviction_line(log, "old-0001").find("): retention_days"), std::string::npos) << log;
  EXPECT_NE(eviction_line(log, "older-0002").find("): max_disk_mb"), std::string::npos) << log;
  EXPECT_EQ(evictions_said(log, "newer-0003"), 0u) << log;
  const CtlRun status = run_ctl(socket, {"status"});
  EXPECT_LE(status.reply["disk_bytes"].get<uint64_t>(), uint64_t{1} << 20) << status.describe();
  EXPECT_EQ(status.reply["disk_bytes"].get<uint64_t>(), bytes_under(out)) << status.describe();

  // While it runs: a directory that ages past retention_days (planted so, as a binary last
  // sampled 40 days ago would be) goes at the next flush.
  plant(out / "aged-0004", std::chrono::hours(24 * 40), 10'000);
  const CtlRun again = run_ctl(socket, {"flush"});
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  EXPECT_FALSE(fs::exists(out / "aged-0004")) << daemon.describe();
  EXPECT_NE(eviction_line(daemon.err(), "aged-0004").find("): retention_days"), std::string::npos)
      << daemon.err();
  EXPECT_TRUE(fs::exists(out / "newer-0003")) << daemon.describe();

  daemon.signal(SIGTERM);
  const auto code = daemon.wait(kPatience);
  ASSERT_TRUE(code) << daemon.describe();
  EXPECT_EQ(*code, 0) << daemon.describe();
}

class DaemonManyBinariesTest : public SpoolFixtureTest {
 protected:
  std::string config_text(std::optional<uint64_t> budget_bytes) const {
    std::string binaries;
    for (const Program& p : programs_)
      binaries += (binaries.empty() ? "" : ", ") + exact_path_pattern(p.path);
    std::string text = "output_dir = \"" + out().string() + "\"\nsocket = \"" + socket().string() +
                       "\"\nevent = \"cpu-clock\"\nfrequency = 1000\nflush_interval = "
                       "\"1h\"\nretention_days = 30\n"
                       "binaries = [" +
                       binaries + "]\n";
    if (budget_bytes) {
      // A whole number of KiB is a fraction of a MiB that ten decimals write exactly.
      char mb[64];
      std::snprintf(mb, sizeof mb, "%.10f", static_cast<double>(*budget_bytes) / (1 << 20));
      text += std::string("max_disk_mb = ") + mb + "\n";
    }
    return text;
  }
  fs::path out() const { return tmp_ / "out"; }
  fs::path socket() const { return tmp_ / "ctl"; }

  // A flush asked for, after which the directory must hold at most `budget` bytes; `woken` ran
  // since `before` was measured (so they are the most recently sampled). Checks which
  // directories went against the test's own reckoning, that each removal was logged once in
  // what the daemon said since `log_from`, and that status agrees with the measurement.
  // Returns the names evicted.
  std::set<std::string> flush_and_check(const std::map<std::string, BinaryDir>& before,
                                        const std::set<std::string>& woken, uint64_t budget,
                                        BackgroundProcess& daemon, size_t log_from) {
    const CtlRun flush = run_ctl(socket(), {"flush"});
    EXPECT_EQ(flush.exit_code, 0) << flush.describe() << daemon.describe();
    const auto after = binary_dirs(out());
    const uint64_t total = bytes_under(out());
    EXPECT_LE(total, budget) << daemon.describe();
    const CtlRun status = run_ctl(socket(), {"status"});
    EXPECT_EQ(status.reply.value("disk_bytes", uint64_t{0}), total) << status.describe();

    // Least recently sampled first: the directories that were there and did not run, in the
    // order of their meta.json, then the ones that ran, in the order they ran.
    std::map<std::string, BinaryDir> idle;
    for (const auto& [name, d] : before) {
      if (!woken.count(name)) idle[name] = d;
    }
    std::set<std::string> evicted;
    std::vector<std::string> order = by_last_sample(idle);
    for (const Program& p : programs_) {
      if (woken.count(p.directory)) order.push_back(p.directory);  // programs_ is in running order
    }
    for (const std::string& name : order) {
      if (!after.count(name)) evicted.insert(name);
    }
    // What went is a prefix of that order: nothing more recent stayed while something older went.
    size_t prefix = 0;
    while (prefix < order.size() && evicted.count(order[prefix])) ++prefix;
    EXPECT_EQ(prefix, evicted.size())
        << "a more recently sampled directory went before an older one";
    // And no more than needed: the last one to go did not fit beside what stayed.
    if (prefix > 0 && !woken.count(order[prefix - 1])) {
      EXPECT_GT(total + before.at(order[prefix - 1]).bytes, budget)
          << order[prefix - 1] << " was evicted for nothing";
    }
    for (const auto& [name, d] : after) {
      EXPECT_TRUE(before.count(name) || woken.count(name)) << name << " appeared without a sample";
    }
    const std::string log = daemon.err().substr(log_from);
    for (const std::string& name : order) {
      EXPECT_EQ(evictions_said(log, name), evicted.count(name)) << name << "\n" << log;
      if (evicted.count(name)) {
        EXPECT_NE(eviction_line(log, name).find("): max_disk_mb"), std::string::npos) << log;
      }
    }
    return evicted;
  }

  TempDir tmp_;
  std::vector<Program> programs_;
};

TEST_F(DaemonManyBinariesTest, TheDiskBudgetIsAHardLimitWhileManyBinariesAreProfiled) {
  constexpr size_t kPrograms = 14;
  for (size_t i = 0; i < kPrograms; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "spool_hot_%02zu", i);
    Program p;
    p.path = spool_fixture(name);
    const std::string id = readelf_build_id(p.path);
    ASSERT_EQ(id.size(), 40u) << p.path;
    p.directory = p.path.filename().string() + "-" + id;
    programs_.push_back(std::move(p));
  }
  const fs::path config = tmp_ / "profcollect.toml";

  // 1. No budget yet: every program runs once, one after another; retention_days removes at
  // start what an earlier run left 40 days ago.
  plant(out() / "expired-0001", std::chrono::hours(24 * 40), 5000);
  plant(out() / "stale-0002", std::chrono::hours(24 * 3), 3000);
  write_text(config, config_text(std::nullopt));
  std::optional<NotifyListener> notify(std::in_place, tmp_ / "notify");
  std::optional<BackgroundProcess> daemon(start_daemon(config, *notify));
  ASSERT_TRUE(notify->wait_for("READY=1", kPatience)) << daemon->describe() << notify->describe();
  EXPECT_FALSE(fs::exists(out() / "expired-0001")) << daemon->describe();
  EXPECT_NE(eviction_line(daemon->err(), "expired-0001").find("): retention_days"),
            std::string::npos)
      << daemon->describe();
  for (Program& p : programs_) {
    p.run_once();
    if (HasFatalFailure()) return;
  }
  ASSERT_EQ(run_ctl(socket(), {"flush"}).exit_code, 0) << daemon->describe();
  daemon->signal(SIGTERM);
  ASSERT_EQ(daemon->wait(kPatience), std::optional<int>(0)) << daemon->describe();
  daemon.reset();
  notify.reset();

  auto dirs = binary_dirs(out());
  ASSERT_EQ(dirs.size(), kPrograms + 1) << "fourteen binaries and stale-0002";
  for (size_t i = 1; i < kPrograms; ++i) {
    ASSERT_LT(dirs[programs_[i - 1].directory].last_sample_ns,
              dirs[programs_[i].directory].first_sample_ns)
        << "the programs ran one after another";
  }

  // 2. A restart with a budget that holds the six most recently sampled binaries (and what is
  // not a binary directory): at start, before anything is written, retention_days removes what
  // is too old and the budget the least recently sampled -- stale-0002 first, then the programs
  // in the order they ran.
  plant(out() / "expired-0003", std::chrono::hours(24 * 40), 5000);
  dirs = binary_dirs(out());
  uint64_t keep = bytes_under(out());
  for (const auto& [name, d] : dirs) keep -= d.bytes;  // collection.json
  for (size_t i = kPrograms - 6; i < kPrograms; ++i) keep += dirs[programs_[i].directory].bytes;
  const uint64_t budget = (keep + 1023) / 1024 * 1024;
  std::set<std::string> expected_gone = {"expired-0003"};
  {
    uint64_t total = bytes_under(out()) - dirs["expired-0003"].bytes;
    dirs.erase("expired-0003");
    for (const std::string& name : by_last_sample(dirs)) {
      if (total <= budget) break;
      expected_gone.insert(name);
      total -= dirs[name].bytes;
    }
  }
  ASSERT_TRUE(expected_gone.count("stale-0002") && expected_gone.count(programs_[0].directory))
      << budget;
  write_text(config, config_text(budget));
  notify.emplace(tmp_ / "notify");
  daemon.emplace(start_daemon(config, *notify));
  ASSERT_TRUE(notify->wait_for("READY=1", kPatience)) << daemon->describe() << notify->describe();
  EXPECT_LE(bytes_under(out()), budget);
  for (const auto& [name, d] : binary_dirs(out()))
    EXPECT_FALSE(expected_gone.count(name)) << name << " stayed";
  for (const std::string& name : expected_gone) {
    EXPECT_FALSE(fs::exists(out() / name)) << name;
    EXPECT_NE(eviction_line(daemon->err(), name)
                  .find(name == "expired-0003" ? "): retention_days" : "): max_disk_mb"),
              std::string::npos)
        << daemon->describe();
  }

  // 3. The programs run again, four at a time in the order they first ran, each time followed
  // by a flush: evicted binaries come back with their new samples and push out the least
  // recently sampled, those this daemon profiles (their counts in memory) included.
  std::set<std::string> profiled_here;  // sampled by this daemon run, directory not evicted since
  std::string dropped;                  // one of them whose directory was evicted
  uint64_t dropped_last_ns = 0;         // its last sample before that
  for (int round = 0; round < 6 && dropped.empty(); ++round) {
    const auto before = binary_dirs(out());
    const size_t log_from = daemon->err().size();
    // programs_ is kept in the order they last ran: the first four run, then go last.
    std::set<std::string> woken;
    for (size_t k = 0; k < 4; ++k) {
      programs_[k].run_once();
      if (HasFatalFailure()) return;
      woken.insert(programs_[k].directory);
    }
    std::rotate(programs_.begin(), programs_.begin() + 4, programs_.end());
    const auto evicted = flush_and_check(before, woken, budget, *daemon, log_from);
    const std::string log = daemon->err().substr(log_from);
    for (const std::string& name : evicted) {
      const bool had_counts = profiled_here.count(name) || woken.count(name);
      EXPECT_EQ(
          eviction_line(log, name).find("its counts in memory are dropped") != std::string::npos,
          had_counts)
          << eviction_line(log, name);
      if (had_counts && !woken.count(name) && dropped.empty()) {
        dropped = name;
        dropped_last_ns = before.at(name).last_sample_ns;
      }
    }
    for (const std::string& name : woken) profiled_here.insert(name);
    for (const std::string& name : evicted) profiled_here.erase(name);
  }
  ASSERT_FALSE(dropped.empty()) << "no binary this daemon profiled was evicted";
  size_t dropped_program = 0;
  for (size_t i = 0; i < kPrograms; ++i) {
    if (programs_[i].directory == dropped) dropped_program = i;
  }

  // 4. The evicted binary still runs (mapped, asleep): a flush without new samples of it does
  // not bring its directory back, and when it runs again its profile starts anew -- its first
  // sample after the last one the evicted directory held.
  ASSERT_EQ(run_ctl(socket(), {"flush"}).exit_code, 0) << daemon->describe();
  EXPECT_FALSE(fs::exists(out() / dropped)) << "the evicted profile was written back from memory";
  EXPECT_LE(bytes_under(out()), budget);
  programs_[dropped_program].run_once();
  if (HasFatalFailure()) return;
  ASSERT_EQ(run_ctl(socket(), {"flush"}).exit_code, 0) << daemon->describe();
  const auto reborn = binary_dirs(out());
  ASSERT_TRUE(reborn.count(dropped)) << daemon->describe();
  EXPECT_GT(reborn.at(dropped).first_sample_ns, dropped_last_ns)
      << "counts from before the eviction were written back";
  EXPECT_LE(bytes_under(out()), budget);

  daemon->signal(SIGTERM);
  EXPECT_EQ(daemon->wait(kPatience), std::optional<int>(0)) << daemon->describe();
  EXPECT_LE(bytes_under(out()), budget) << "the final flush broke the budget";
}

}  // namespace
}  // namespace profcollect::test
