// Issue 12, acceptance 2: the daemon killed with SIGKILL and started again takes up the profiles
// it had flushed: after the restart's first flush every count of the binary's profiles (BOLT
// fdata, samples.ip, the AutoFDO function totals) is at least what it was, and the new samples
// are added. And the flush timer: with a short flush_interval the profiles are written again and
// again without being asked, so a SIGKILL loses only what came after the last of them.
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <sstream>
#include <string>

#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class DaemonRestartTest : public LiveFixtureTest {
 protected:
  // Profiles live_spin only, at 4000 Hz on cpu-clock, flushing every `flush_interval`.
  void write_config(const std::string& flush_interval) const {
    write_text(config_, "output_dir = \"" + out_.string() + "\"\nsocket = \"" + socket_.string() +
                            "\"\nevent = \"cpu-clock\"\nfrequency = 4000\nflush_interval = \"" +
                            flush_interval + "\"\nbinaries = [" +
                            exact_path_pattern(fixture("live_spin")) + "]\n");
  }
  TempDir tmp_;
  const fs::path out_ = tmp_ / "out", socket_ = tmp_ / "ctl", config_ = tmp_ / "profcollect.toml";
};

// samples.ip: "<hex address> <count>" per line.
std::map<uint64_t, uint64_t> address_counts(const fs::path& file) {
  std::map<uint64_t, uint64_t> counts;
  std::istringstream in(read_file(file));
  std::string address;
  uint64_t count = 0;
  while (in >> address >> count) counts[std::stoull(address, nullptr, 16)] += count;
  return counts;
}

// An LLVM sample profile's function totals: its unindented "name:total:head" lines.
std::map<std::string, uint64_t> function_totals(const fs::path& file) {
  std::map<std::string, uint64_t> totals;
  for (const std::string& line : split_lines(read_file(file))) {
    if (line.empty() || line[0] == ' ') continue;
    const size_t head = line.rfind(':');
    const size_t total =
        head == std::string::npos || head == 0 ? std::string::npos : line.rfind(':', head - 1);
    if (total == std::string::npos) continue;
    totals[line.substr(0, total)] += std::stoull(line.substr(total + 1, head - total - 1));
  }
  return totals;
}

// Every key of `before` is in `after` with at least its count.
template <typename Key>
void expect_only_grown(const std::map<Key, uint64_t>& before, const std::map<Key, uint64_t>& after,
                       const std::string& what) {
  for (const auto& [key, count] : before) {
    const auto it = after.find(key);
    ASSERT_TRUE(it != after.end())
        << what << ": " << ::testing::PrintToString(key) << " vanished after the restart";
    EXPECT_GE(it->second, count) << what << ": " << ::testing::PrintToString(key)
                                 << " went down after the restart";
  }
}

TEST_F(DaemonRestartTest, AfterSigkillARestartTakesUpTheFlushedProfilesAndCountsOnlyGrow) {
  const fs::path &tmp = tmp_.path(), &out = out_, &socket = socket_, &config = config_;
  write_config("1h");
  BackgroundProcess target = start_target(fixture("live_spin"), {"a", "0"});

  NotifyListener notify(tmp / "notify");
  std::optional<BackgroundProcess> daemon(start_daemon(config, notify));
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon->describe() << notify.describe();
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 200ms, kPatience));
  const CtlRun first = run_ctl(socket, {"flush"});
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const auto dirs = profile_dirs(out, "live_spin");
  ASSERT_EQ(dirs.size(), 1u) << ::testing::PrintToString(dirs) << daemon->describe();
  const StrictFdata before = read_fdata_strictly(dirs[0] / "bolt.fdata");
  ASSERT_TRUE(before.valid()) << before.error;
  const nlohmann::json meta_before = read_json_file(dirs[0] / "meta.json");
  ASSERT_GT(before.total(), 0u);
  const std::map<uint64_t, uint64_t> ips_before = address_counts(dirs[0] / "samples.ip");
  const std::map<std::string, uint64_t> autofdo_before = function_totals(dirs[0] / "autofdo.prof");
  ASSERT_FALSE(ips_before.empty());
  ASSERT_TRUE(autofdo_before.contains("spin_a")) << read_file(dirs[0] / "autofdo.prof");

  // Samples after the flush are lost with the process (at most one flush interval's).
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 50ms, kPatience));
  daemon->signal(SIGKILL);
  ASSERT_TRUE(daemon->wait(kPatience));
  EXPECT_TRUE(fs::exists(socket)) << "SIGKILL leaves the socket file";
  daemon.reset();

  // The restart replaces the stale socket and adds to what is in the output directory.
  daemon.emplace(start_daemon(config, notify));
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon->describe() << notify.describe();
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 200ms, kPatience));
  const CtlRun second = run_ctl(socket, {"flush"});
  ASSERT_EQ(second.exit_code, 0) << second.describe() << daemon->describe();
  const StrictFdata after = read_fdata_strictly(dirs[0] / "bolt.fdata");
  ASSERT_TRUE(after.valid()) << after.error;
  for (const auto& [site, count] : before.counts) {
    const auto it = after.counts.find(site);
    ASSERT_TRUE(it != after.counts.end())
        << site.first << "+" << site.second << " vanished after the restart";
    EXPECT_GE(it->second, count) << site.first << "+" << site.second
                                 << " went down after the restart";
  }
  EXPECT_GT(after.total(), before.total()) << "the restarted daemon added nothing";
  expect_only_grown(ips_before, address_counts(dirs[0] / "samples.ip"), "samples.ip");
  const std::map<std::string, uint64_t> autofdo_after = function_totals(dirs[0] / "autofdo.prof");
  expect_only_grown(autofdo_before, autofdo_after, "autofdo.prof");
  EXPECT_GT(autofdo_after.at("spin_a"), autofdo_before.at("spin_a"));
  const nlohmann::json meta_after = read_json_file(dirs[0] / "meta.json");
  EXPECT_GT(meta_after["samples"].get<uint64_t>(), meta_before["samples"].get<uint64_t>());
  EXPECT_EQ(meta_after["first_sample_ns"], meta_before["first_sample_ns"]);

  daemon->signal(SIGTERM);
  const auto code = daemon->wait(kPatience);
  ASSERT_TRUE(code) << daemon->describe();
  EXPECT_EQ(*code, 0) << daemon->describe();
}

// The daemon's own flush timer: nothing asks for a flush, yet the profile is written and then
// rewritten with more samples; everything counted before a flush is in the files after it, so a
// SIGKILL loses at most what came after the last one.
TEST_F(DaemonRestartTest, TheFlushTimerWritesProfilesUnaskedSoASigkillLosesOnlyTheLastInterval) {
  const fs::path &tmp = tmp_.path(), &out = out_, &socket = socket_, &config = config_;
  write_config("1s");
  BackgroundProcess target = start_target(fixture("live_spin"), {"a", "0"});
  NotifyListener notify(tmp / "notify");
  std::optional<BackgroundProcess> daemon(start_daemon(config, notify));
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon->describe() << notify.describe();

  // The fdata total of the binary's profile as the last flush left it; 0 while there is none.
  const auto flushed_total = [&]() -> uint64_t {
    const auto dirs = profile_dirs(out, "live_spin");
    if (dirs.size() != 1 || !fs::exists(dirs[0] / "bolt.fdata")) return 0;
    const StrictFdata fdata = read_fdata_strictly(dirs[0] / "bolt.fdata");
    return fdata.valid() ? fdata.total() : 0;
  };
  uint64_t first = 0;
  ASSERT_TRUE(wait_until([&] { return (first = flushed_total()) > 0; }, kPatience))
      << "no flush without a request\n"
      << daemon->describe();
  uint64_t second = 0;
  ASSERT_TRUE(wait_until([&] { return (second = flushed_total()) > first; }, kPatience))
      << "the profile was not written again\n"
      << daemon->describe();

  // What the daemon has counted for the binary now reaches the files by a later timer flush.
  const CtlRun status = run_ctl(socket, {"status"});
  ASSERT_EQ(status.exit_code, 0) << status.describe();
  uint64_t counted = 0;
  for (const auto& b : status.reply["binaries"]) {
    if (b["path"] == fixture("live_spin").string()) counted = b["samples"].get<uint64_t>();
  }
  ASSERT_GT(counted, 0u) << status.reply.dump();
  uint64_t on_disk = 0;
  ASSERT_TRUE(wait_until([&] { return (on_disk = flushed_total()) >= counted; }, kPatience))
      << "counted " << counted << ", flushed " << on_disk << "\n"
      << daemon->describe();

  daemon->signal(SIGKILL);
  ASSERT_TRUE(daemon->wait(kPatience));
  daemon.reset();
  const uint64_t after_kill = flushed_total();
  EXPECT_GE(after_kill, counted) << "the samples of the flushes before the SIGKILL are kept";
}

}  // namespace
}  // namespace profcollect::test
