// Issue 3, acceptance 3: with --flush-interval 1, a reader polling every 50 ms until it has seen
// five flushes always finds a complete, valid bolt.fdata (and meta.json, collection.json), and
// the counts only grow.
// SIGTERM writes a final flush and exits 0; after SIGKILL what was flushed is intact; a second
// run into the same DIR adds to the first.
//
// The target is live_spin: mode `a` runs spin_a and shared_work, mode `b` spin_b and
// shared_work, one binary (one build-id, one profile directory). So after a second run in mode
// b, spin_a's lines must be exactly what the first run left, spin_b's must be new, and
// shared_work's must have grown: the runs add up rather than replace each other.
#include <gtest/gtest.h>
#include <signal.h>

#include <set>
#include <thread>

#include "tests/integration/cpu_time.h"
#include "tests/integration/live_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

class LiveFlushTest : public LiveFixtureTest {};

// What a reader sees in DIR at one moment.
struct Snapshot {
  bool present = false;  // a first flush is complete: meta.json (written last) and collection.json
  StrictFdata fdata;
  json meta;
  json collection;
};

Snapshot look(const fs::path& out) {
  Snapshot s;
  const auto dirs = profile_dirs(out, "live_spin");
  // A binary's meta.json comes after its fdata, collection.json after every binary: before
  // both exist, the first flush is still being written.
  if (dirs.empty() || !fs::exists(dirs[0] / "meta.json") || !fs::exists(out / "collection.json"))
    return s;
  s.present = true;
  s.fdata = read_fdata_strictly(dirs[0] / "bolt.fdata");
  s.meta = read_json_file(dirs[0] / "meta.json");
  s.collection = read_json_file(out / "collection.json");
  return s;
}

// "" when `now` is a valid snapshot whose counts are all at least those of `before`.
// collection.json describes one run: across runs only the profiles add up.
std::string grew_from(const Snapshot& before, const Snapshot& now, bool same_run = true) {
  if (!now.fdata.valid()) return "invalid fdata: " + now.fdata.error;
  if (now.meta.is_discarded() || !now.meta.contains("samples"))
    return "meta.json missing or not JSON";
  if (now.collection.is_discarded() || !now.collection.contains("samples"))
    return "collection.json missing or not JSON";
  if (!before.present) return "";
  for (const auto& [site, count] : before.fdata.counts) {
    const auto it = now.fdata.counts.find(site);
    if (it == now.fdata.counts.end() || it->second < count)
      return "count of " + site.first + "+" + std::to_string(site.second) + " went from " +
             std::to_string(count) + " to " +
             (it == now.fdata.counts.end() ? std::string("nothing") : std::to_string(it->second));
  }
  if (now.meta["samples"].get<uint64_t>() < before.meta["samples"].get<uint64_t>())
    return "meta.json samples went down";
  if (same_run &&
      now.collection["samples"].get<uint64_t>() < before.collection["samples"].get<uint64_t>())
    return "collection.json samples went down";
  return "";
}

uint64_t function_count(const StrictFdata& f, const std::string& function) {
  const auto per = f.per_function();
  const auto it = per.find(function);
  return it == per.end() ? 0 : it->second;
}

TEST_F(LiveFlushTest, PeriodicFlushesAreCompleteAndGrowSigtermFlushesAndASecondRunAdds) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  BackgroundProcess target = start_target(spin, {"a", "0"});
  BackgroundProcess collector = start_profcollect(
      {"--flush-interval", "1", "-o", out.string(), "--pid", std::to_string(target.pid())});

  // The reader: every 50 ms once the first flush is there, until it has seen five different
  // states (the target runs all along, so each one-second flush adds samples). A loaded machine
  // may stretch the seconds the target gets CPU in, not the flushes: five within 30 s.
  ASSERT_TRUE(wait_until([&] { return look(out).present; }, kPatience)) << "no flush\n"
                                                                        << collector.describe();
  Snapshot last = look(out);
  ASSERT_EQ(grew_from(Snapshot{}, last), "");
  std::set<uint64_t> totals_seen = {last.fdata.total()};
  size_t reads = 0;
  const auto end = std::chrono::steady_clock::now() + 30s;
  while (totals_seen.size() < 5 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(50ms);
    Snapshot now = look(out);
    ++reads;
    ASSERT_TRUE(now.present) << "the profile vanished at read " << reads;
    const std::string problem = grew_from(last, now);
    ASSERT_EQ(problem, "") << "at read " << reads;
    totals_seen.insert(now.fdata.total());
    last = std::move(now);
  }
  ASSERT_TRUE(collector.running()) << collector.describe();
  EXPECT_GE(totals_seen.size(), 5u) << "flushes seen in 30 s at --flush-interval 1";
  EXPECT_GE(function_count(last.fdata, "spin_a"), 1u);

  // SIGTERM after the target ran 100 ms of CPU time (400 periods at 4000 Hz) with no periodic
  // flush in between: only the final flush can write those samples. A flush during the wait
  // (the wait may take more than the flush interval on a loaded machine) makes it start again.
  Snapshot before_term;
  const auto give_up = std::chrono::steady_clock::now() + kPatience;
  for (;;) {
    ASSERT_LT(std::chrono::steady_clock::now(), give_up)
        << "no 100 ms of the target's CPU time without a flush";
    const Snapshot before_wait = look(out);
    ASSERT_TRUE(wait_for_cpu_time(target.pid(), 100ms, kPatience));
    before_term = look(out);
    if (before_term.fdata.total() == before_wait.fdata.total() &&
        before_term.meta["samples"] == before_wait.meta["samples"])
      break;
  }
  collector.signal(SIGTERM);
  const auto status = collector.wait(kPatience);
  ASSERT_TRUE(status) << "profcollect did not end after SIGTERM\n" << collector.describe();
  EXPECT_EQ(*status, 0) << collector.describe();
  const Snapshot first_run = look(out);
  ASSERT_EQ(grew_from(before_term, first_run), "");
  EXPECT_GT(first_run.fdata.total(), before_term.fdata.total())
      << "no final flush: nothing of the last 100 ms of the target's CPU time was written";
  EXPECT_EQ(function_count(first_run.fdata, "spin_b"), 0u) << "mode a never runs spin_b";
  ASSERT_GT(function_count(first_run.fdata, "shared_work"), 0u);
  target.signal(SIGKILL);

  // A second run into the same DIR, in mode b: adds to what the first left.
  const std::vector<std::string> second = {
      profcollect_exe().string(), "-o", out.string(), "--", spin.string(), "b", "1"};
  const CommandResult run = run_command(second, {.cwd = {}, .timeout = kPatience});
  ASSERT_EQ(run.exit_code, 0) << run.describe(second);
  const Snapshot both = look(out);
  ASSERT_EQ(grew_from(first_run, both, /*same_run=*/false), "");
  for (const auto& [site, count] : first_run.fdata.counts) {
    if (site.first == "spin_a") {
      EXPECT_EQ(both.fdata.counts.at(site), count)
          << "spin_a+" << site.second << " (not run by mode b)";
    }
  }
  EXPECT_GT(function_count(both.fdata, "spin_b"), 0u) << "the second run's samples are missing";
  EXPECT_GT(function_count(both.fdata, "shared_work"),
            function_count(first_run.fdata, "shared_work"));
  // meta.json adds up too: the first run's samples plus the second's (its collection.json says
  // how many of its samples it mapped; live_spin is its only profiled binary).
  EXPECT_EQ(both.meta["samples"].get<uint64_t>(),
            first_run.meta["samples"].get<uint64_t>() + both.collection["mapped"].get<uint64_t>())
      << "first run's meta: " << first_run.meta.dump()
      << "\nsecond run's collection: " << both.collection.dump();
  EXPECT_EQ(both.meta["first_sample_ns"], first_run.meta["first_sample_ns"]);
  EXPECT_GT(both.meta["last_sample_ns"].get<uint64_t>(),
            first_run.meta["last_sample_ns"].get<uint64_t>());
}

TEST_F(LiveFlushTest, AfterSigkillWhatWasFlushedIsIntact) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  BackgroundProcess target = start_target(spin, {"a", "0"});
  BackgroundProcess collector = start_profcollect(
      {"--flush-interval", "1", "-o", out.string(), "--pid", std::to_string(target.pid())});

  // Wait for a second flush, then kill at a moment unrelated to the flushes.
  ASSERT_TRUE(wait_until([&] { return look(out).present; }, kPatience)) << collector.describe();
  const uint64_t first_total = look(out).fdata.total();
  ASSERT_TRUE(wait_until([&] { return look(out).fdata.total() != first_total; }, kPatience));
  std::this_thread::sleep_for(700ms);
  const Snapshot before_kill = look(out);
  ASSERT_EQ(grew_from(Snapshot{}, before_kill), "");
  collector.signal(SIGKILL);
  ASSERT_TRUE(collector.wait(kPatience));

  const Snapshot after = look(out);
  ASSERT_EQ(grew_from(before_kill, after), "") << "the files a killed collector left";
  // And profcollect itself reads them back.
  const ProfcollectRun report = run_profcollect({"report", out.string()});
  EXPECT_EQ(report.run.exit_code, 0) << report.describe();
}

}  // namespace
}  // namespace profcollect::test
