// A live session's drain thread (collector/pipeline/drain_thread.h) against the kernel's ring buffers:
// while the session's thread does other work (here: nothing at all for a while, as during a long
// flush), the buffers are still emptied into the session's backlog, so a one-page buffer that
// holds about 70 samples lets through many times that; and the backlog's bound holds: past it,
// samples are counted lost as backlog_full, never waited for. A flush holds every sample taken
// before it began, the drain thread's last pass included.
#include <gtest/gtest.h>
#include <signal.h>

#include "collector/session/collection_session.h"
#include "tests/integration/cpu_time.h"
#include "tests/integration/live_support.h"
#include "tests/integration/quiet_logger.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class LiveDrainThreadTest : public LiveFixtureTest {};

SessionSettings one_page_settings(pid_t target, const fs::path& out) {
  SessionSettings s;
  s.target = CollectionTarget{TargetKind::Processes, {target}};
  s.event = "cpu-clock";
  s.frequency = 1000;
  s.mmap_pages = 1;  // 4 KiB: about 70 samples of this layout
  s.output_dir = out.string();
  return s;
}

TEST_F(LiveDrainThreadTest, TheBuffersAreEmptiedWhileTheSessionsThreadIsBusy) {
  BackgroundProcess target = start_target(fixture("live_spin"), {"a", "0"});
  TempDir tmp;
  QuietLogger logger;
  CollectionSession session(one_page_settings(target.pid(), tmp / "out"), logger);
  session.start();
  // The session's thread reads nothing while the target runs 0.5 s of CPU time: 500 samples
  // into a buffer of about 70.
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 500ms, kPatience));
  const EngineCounters held = session.engine_counters();
  EXPECT_GT(held.backlog_bytes, 4096u)
      << "the backlog holds no more than a ring buffer: nothing drained meanwhile";
  EXPECT_LE(held.backlog_bytes, held.backlog_limit_bytes);
  session.drain();
  // More samples reached the session than one buffer could have held.
  EXPECT_GT(session.counts().samples, 140u) << logger.text();
  ASSERT_TRUE(session.stop()) << logger.text();
  EXPECT_EQ(session.engine_counters().lost.backlog_full, 0u);
}

TEST_F(LiveDrainThreadTest, PastItsBoundTheBacklogCountsWhatItLeavesOut) {
  BackgroundProcess target = start_target(fixture("live_spin"), {"a", "0"});
  TempDir tmp;
  QuietLogger logger;
  SessionSettings settings = one_page_settings(target.pid(), tmp / "out");
  settings.backlog_bytes = 8192;  // about 90 samples, far fewer than the 500 to come
  CollectionSession session(settings, logger);
  session.start();
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 500ms, kPatience));
  session.drain();  // the counts follow what the session has taken in
  const EngineCounters c = session.engine_counters();
  EXPECT_GT(c.lost.backlog_full, 0u) << "past its bound the backlog took everything";
  // A pass never takes more than the room left (and a sixteenth for side-band records).
  EXPECT_LE(c.backlog_peak_bytes, settings.backlog_bytes + settings.backlog_bytes / 16);
  ASSERT_TRUE(session.stop()) << logger.text();
  const EngineCounters end = session.engine_counters();
  EXPECT_EQ(end.lost_samples, end.lost.total());
  const nlohmann::json collection = read_json_file(tmp / "out" / "collection.json");
  EXPECT_EQ(collection.at("lost_by_reason").at("backlog_full").get<uint64_t>(),
            end.lost.backlog_full);
}

// The time order keeps a pass's records until the next pass that reads something (perf's round
// rule); a target that stopped leaves only empty passes. The flush settles what came before it.
TEST_F(LiveDrainThreadTest, AFlushHoldsEverySampleTakenBeforeItBegan) {
  BackgroundProcess target = start_target(fixture("live_spin"), {"a", "0"});
  TempDir tmp;
  QuietLogger logger;
  SessionSettings settings = one_page_settings(target.pid(), tmp / "out");
  settings.mmap_pages = 64;
  CollectionSession session(settings, logger);
  session.start();
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 300ms, kPatience));
  target.signal(SIGSTOP);
  ASSERT_TRUE(wait_until([&] { return process_state(target.pid()) == 'T'; }, kPatience));
  // Whatever pass the drain thread made last read the last samples; none come after.
  ASSERT_TRUE(session.flush()) << logger.text();
  const std::vector<fs::path> dirs = profile_dirs(tmp / "out", "live_spin");
  ASSERT_EQ(dirs.size(), 1u) << logger.text();
  const uint64_t at_flush = read_json_file(dirs[0] / "meta.json").at("samples").get<uint64_t>();
  EXPECT_GT(at_flush, 100u);
  ASSERT_TRUE(session.stop()) << logger.text();
  const uint64_t at_end = read_json_file(dirs[0] / "meta.json").at("samples").get<uint64_t>();
  EXPECT_EQ(at_flush, at_end) << "the flush left out samples taken before it began";
  target.signal(SIGCONT);
}

}  // namespace
}  // namespace profcollect::test
