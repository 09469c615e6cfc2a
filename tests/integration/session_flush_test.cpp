// The live collection session's flush, fed a recording (collector/pipeline/replay_engine.h): a flush with
// nothing new for a binary leaves its files as the last flush wrote them (a long-lived image
// that no longer runs costs no rendering), while collection.json is written every time; and
// while a flush writes, the session's drain thread goes on emptying the engine's buffers.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "collector/session/collection_session.h"
#include "collector/input/perf_data_reader.h"
#include "collector/pipeline/replay_engine.h"
#include "tests/integration/convert_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

class FailingLogger : public SessionLogger {
 public:
  void note(const std::string&) override {}
  void warning(const std::string& m) override { ADD_FAILURE() << "warning: " << m; }
  void error(const std::string& m) override { ADD_FAILURE() << "error: " << m; }
};

// Inode of every file under dir: a file replaced atomically gets a new one.
std::map<std::string, ino_t> inodes(const fs::path& dir) {
  std::map<std::string, ino_t> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0)
      out[fs::relative(e.path(), dir)] = st.st_ino;
  }
  return out;
}

class SessionFlushTest : public ConvertFixtureTest {
 protected:
  // Every binary of lib.data (a program and its library), system-wide, into dir_/out.
  SessionSettings every_binary_settings() const {
    SessionSettings settings;
    settings.target.kind = TargetKind::SystemWide;
    settings.output_dir = (dir_ / "out").string();
    settings.binary_patterns = {"."};
    return settings;
  }
  // A session replaying lib.data, started and drained: its profiles are in memory, unwritten.
  std::unique_ptr<CollectionSession> replay_every_binary(const SessionSettings& settings,
                                                         SessionLogger& logger) {
    auto session = std::make_unique<CollectionSession>(
        settings, logger,
        std::make_unique<ReplayEngine>(open_perf_data(fixture("lib.data").string())));
    session->start();
    session->drain();
    return session;
  }
  TempDir dir_;
};

TEST_F(SessionFlushTest, AFlushWithNothingNewRewritesNoBinaryButCollectionJson) {
  FailingLogger logger;
  SessionSettings settings;
  settings.target.kind = TargetKind::SystemWide;
  settings.output_dir = (dir_ / "out").string();
  settings.binaries = {fixture("hot_gcc").string()};
  CollectionSession session(
      settings, logger,
      std::make_unique<ReplayEngine>(open_perf_data(fixture("hot_gcc.data").string())));
  session.start();
  session.drain();
  ASSERT_TRUE(session.flush());
  const auto first = inodes(dir_ / "out");
  ASSERT_GT(first.size(), 3u) << "collection.json and the binary's files";
  ASSERT_TRUE(session.flush());
  const auto second = inodes(dir_ / "out");
  ASSERT_EQ(first.size(), second.size());
  for (const auto& [name, ino] : first) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(second.count(name));
    if (name == "collection.json") {
      EXPECT_NE(second.at(name), ino) << "written at every flush";
    } else {
      EXPECT_EQ(second.at(name), ino) << "nothing new: not written again";
    }
  }
  ASSERT_TRUE(session.stop());
}

// A replay that says it collects live, so that the session runs a drain thread for it: collect()
// counts its calls and the threads they come from, and process() replays the recording.
class LiveLikeEngine : public CollectionEngine {
 public:
  explicit LiveLikeEngine(std::unique_ptr<RecordSource> source) : inner_(std::move(source)) {}
  void start() override { inner_.start(); }
  std::vector<int> descriptors() const override { return {}; }
  bool collects_live() const override { return true; }
  bool collect() override {
    std::lock_guard<std::mutex> lock(mutex_);
    collect_threads_.insert(std::this_thread::get_id());
    ++collects_;
    changed_.notify_all();
    return false;
  }
  void process(SamplePipeline& pipeline) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      process_threads_.insert(std::this_thread::get_id());
    }
    inner_.process(pipeline);
  }
  void finish(SamplePipeline& pipeline) override { process(pipeline); }
  bool targets_alive() const override { return inner_.targets_alive(); }
  EngineCounters counters() const override { return inner_.counters(); }
  std::optional<int64_t> time_to_epoch() const override { return inner_.time_to_epoch(); }
  std::vector<std::string> event_names() const override { return inner_.event_names(); }

  // Waits until collect() has been called `n` more times than now; false after `patience`.
  bool wait_for_collects(int n, std::chrono::seconds patience) {
    std::unique_lock<std::mutex> lock(mutex_);
    const int target = collects_ + n;
    return changed_.wait_for(lock, patience, [&] { return collects_ >= target; });
  }
  std::set<std::thread::id> collect_threads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return collect_threads_;
  }
  std::set<std::thread::id> process_threads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return process_threads_;
  }

 private:
  ReplayEngine inner_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int collects_ = 0;
  std::set<std::thread::id> collect_threads_, process_threads_;
};

std::map<std::string, std::string> profile_files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "collection.json")
      out[fs::relative(e.path(), dir)] = read_file(e.path());
  return out;
}

TEST_F(SessionFlushTest, TheDrainThreadGoesOnCollectingWhileAFlushWrites) {
  std::map<std::string, std::string> written[2];
  size_t binaries = 0;
  int flush_steps = 0;
  for (int run = 0; run < 2; ++run) {
    FailingLogger logger;
    SessionSettings settings;
    settings.target.kind = TargetKind::SystemWide;
    settings.output_dir = (dir_ / ("out" + std::to_string(run))).string();
    settings.binary_patterns = {"."};  // every binary with samples: several to write
    settings.drain_thread = run == 0;
    // lib.data: a program whose hot code is in its own library and partly in itself, so two
    // binaries have samples whatever the recording's luck (hot_gcc.data's libc sample is not).
    auto engine = std::make_unique<LiveLikeEngine>(open_perf_data(fixture("lib.data").string()));
    LiveLikeEngine* live = engine.get();
    CollectionSession session(settings, logger, std::move(engine));
    if (run == 0) {
      // Between two binaries the session's thread is held until the drain thread has collected
      // three more times: it does not wait for the flush.
      session.set_flush_progress([&] {
        ++flush_steps;
        EXPECT_TRUE(live->wait_for_collects(3, std::chrono::seconds(60)))
            << "the drain thread stopped collecting while the session's thread was in a flush";
      });
    }
    session.start();
    session.drain();
    binaries = session.profiled_images();
    ASSERT_TRUE(session.flush());
    ASSERT_TRUE(session.stop());
    written[run] = profile_files(settings.output_dir);
    if (run == 0) {
      const auto collectors = live->collect_threads();
      const auto processors = live->process_threads();
      ASSERT_EQ(collectors.size(), 1u) << "collect() runs on the drain thread only";
      ASSERT_EQ(processors.size(), 1u);
      EXPECT_EQ(processors.count(std::this_thread::get_id()), 1u)
          << "process() runs on the session's thread";
      EXPECT_EQ(collectors.count(std::this_thread::get_id()), 0u)
          << "collect() never on the session's thread";
    } else {
      EXPECT_TRUE(live->collect_threads().count(std::this_thread::get_id()))
          << "without a thread, drain() collects";
    }
  }
  ASSERT_GE(binaries, 2u) << "the recording should give several binaries";
  EXPECT_GE(flush_steps, static_cast<int>(binaries))
      << "the flush says it progresses before each binary";
  EXPECT_EQ(written[0], written[1]) << "the drain thread changes nothing written";
}

// A logger that keeps every line.
class KeepingLogger : public SessionLogger {
 public:
  void note(const std::string& m) override { lines.push_back("note: " + m); }
  void warning(const std::string& m) override { lines.push_back("warning: " + m); }
  void error(const std::string& m) override { lines.push_back("error: " + m); }
  bool said(const std::string& what) const {
    for (const std::string& l : lines)
      if (l.find(what) != std::string::npos) return true;
    return false;
  }
  std::vector<std::string> lines;
};

TEST_F(SessionFlushTest, AFlushPastItsDeadlineStopsBetweenBinariesAndSaysSo) {
  KeepingLogger logger;
  const SessionSettings settings = every_binary_settings();
  std::unique_ptr<CollectionSession> replayed = replay_every_binary(settings, logger);
  CollectionSession& session = *replayed;
  const size_t binaries = session.profiled_images();
  ASSERT_GE(binaries, 2u);
  // A deadline already past: no binary is written, each is pending, the summary is.
  const FlushReport& cut =
      session.flush_until(std::chrono::steady_clock::now() - std::chrono::seconds(1));
  EXPECT_TRUE(cut.cut_short);
  EXPECT_EQ(cut.written, 0u);
  EXPECT_EQ(cut.pending, binaries);
  EXPECT_TRUE(profile_files(dir_ / "out").empty());
  EXPECT_TRUE(fs::exists(dir_ / "out" / "collection.json"));
  // Without one, everything; then the final flush past its deadline has nothing left to cut.
  const FlushReport& whole = session.flush_until(std::nullopt);
  EXPECT_FALSE(whole.cut_short);
  EXPECT_EQ(whole.written, binaries);
  EXPECT_TRUE(whole.ok);
  const auto written = profile_files(dir_ / "out");
  EXPECT_TRUE(session.stop(std::chrono::steady_clock::now() - std::chrono::seconds(1)));
  EXPECT_EQ(profile_files(dir_ / "out"), written);
  EXPECT_TRUE(logger.said("; profiles in " + settings.output_dir));
}

// An owner's interrupt (the daemon: a SIGTERM pending) stops a flush part way through a binary's
// rendering: nothing of that binary is written, it and the rest are pending, and the next flush
// writes them all.
TEST_F(SessionFlushTest, AnInterruptStopsAFlushPartWayThroughABinary) {
  KeepingLogger logger;
  const SessionSettings settings = every_binary_settings();
  std::unique_ptr<CollectionSession> replayed = replay_every_binary(settings, logger);
  CollectionSession& session = *replayed;
  const size_t binaries = session.profiled_images();
  ASSERT_GE(binaries, 2u);
  // Asked first between binaries (no), then by the first binary's renderer (yes).
  int asked = 0;
  session.set_flush_interrupt([&] { return ++asked >= 2; });
  const FlushReport& cut = session.flush_until(std::nullopt);
  EXPECT_EQ(asked, 2) << "the renderer asks, and nothing asks after the answer";
  EXPECT_TRUE(cut.cut_short);
  EXPECT_TRUE(cut.ok) << "stopped, not failed";
  EXPECT_EQ(cut.written, 0u);
  EXPECT_EQ(cut.pending, binaries);
  EXPECT_TRUE(profile_files(dir_ / "out").empty())
      << "nothing of the binary whose rendering stopped";
  session.set_flush_interrupt(nullptr);
  const FlushReport& whole = session.flush_until(std::nullopt);
  EXPECT_FALSE(whole.cut_short);
  EXPECT_EQ(whole.written, binaries);
  EXPECT_TRUE(session.stop());
}

TEST_F(SessionFlushTest, AFinalFlushCutShortSaysSoAndNotWhereTheProfilesAre) {
  KeepingLogger logger;
  const SessionSettings settings = every_binary_settings();
  std::unique_ptr<CollectionSession> replayed = replay_every_binary(settings, logger);
  CollectionSession& session = *replayed;
  const size_t binaries = session.profiled_images();
  EXPECT_FALSE(session.stop(std::chrono::steady_clock::now() - std::chrono::seconds(1)));
  EXPECT_TRUE(logger.said("error: final flush cut short after "))
      << ::testing::PrintToString(logger.lines);
  EXPECT_TRUE(
      logger.said("0 binaries written, " + std::to_string(binaries) + " keep their last flush"))
      << ::testing::PrintToString(logger.lines);
  EXPECT_FALSE(logger.said("profiles in")) << ::testing::PrintToString(logger.lines);
  EXPECT_TRUE(logger.said(" in " + std::to_string(binaries) + " profiled binaries, "))
      << ::testing::PrintToString(logger.lines);
}

}  // namespace
}  // namespace profcollect::test
