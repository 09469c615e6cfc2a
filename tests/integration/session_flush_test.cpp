// The live collection session's flush, fed a recording (collector/replay_engine.h): a flush with
// nothing new for a binary leaves its files as the last flush wrote them (a long-lived image
// that no longer runs costs no rendering), while collection.json is written every time; and a
// flush lets the engine empty the kernel's buffers between binaries (absorb_interval).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>
#include <chrono>

#include "collector/collection_session.h"
#include "collector/perf_data_reader.h"
#include "collector/replay_engine.h"
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
    if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0) out[fs::relative(e.path(), dir)] = st.st_ino;
  }
  return out;
}

class SessionFlushTest : public ConvertFixtureTest {
 protected:
  TempDir dir_;
};

TEST_F(SessionFlushTest, AFlushWithNothingNewRewritesNoBinaryButCollectionJson) {
  FailingLogger logger;
  SessionSettings settings;
  settings.target.kind = TargetKind::SystemWide;
  settings.output_dir = (dir_ / "out").string();
  settings.binaries = {fixture("hot_gcc").string()};
  CollectionSession session(settings, logger,
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

// A replay that counts the absorb() calls the session makes, and when: during a flush, never
// while the pipeline is being fed.
class AbsorbCountingEngine : public CollectionEngine {
 public:
  explicit AbsorbCountingEngine(std::unique_ptr<RecordSource> source) : inner_(std::move(source)) {}
  void start() override { inner_.start(); }
  std::vector<int> descriptors() const override { return inner_.descriptors(); }
  void drain(SamplePipeline& pipeline) override {
    draining_ = true;
    inner_.drain(pipeline);
    draining_ = false;
  }
  void absorb() override {
    EXPECT_FALSE(draining_);
    ++absorbs;
  }
  void finish(SamplePipeline& pipeline) override { drain(pipeline); }
  bool targets_alive() const override { return inner_.targets_alive(); }
  EngineCounters counters() const override { return inner_.counters(); }
  std::optional<int64_t> time_to_epoch() const override { return inner_.time_to_epoch(); }
  std::vector<std::string> event_names() const override { return inner_.event_names(); }

  int absorbs = 0;

 private:
  ReplayEngine inner_;
  bool draining_ = false;
};

std::map<std::string, std::string> profile_files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "collection.json")
      out[fs::relative(e.path(), dir)] = read_file(e.path());
  return out;
}

TEST_F(SessionFlushTest, AFlushLetsTheEngineEmptyTheKernelsBuffersBetweenBinaries) {
  std::map<std::string, std::string> written[2];
  int absorbs[2] = {0, 0};
  size_t binaries = 0;
  for (int run = 0; run < 2; ++run) {
    FailingLogger logger;
    SessionSettings settings;
    settings.target.kind = TargetKind::SystemWide;
    settings.output_dir = (dir_ / ("out" + std::to_string(run))).string();
    settings.binary_patterns = {"."};  // every binary with samples: several to write
    settings.absorb_interval = run == 0 ? std::chrono::milliseconds(0) : std::chrono::hours(1);
    // lib.data: a program whose hot code is in its own library and partly in itself, so two
    // binaries have samples whatever the recording's luck (hot_gcc.data's libc sample is not).
    auto engine = std::make_unique<AbsorbCountingEngine>(open_perf_data(fixture("lib.data").string()));
    AbsorbCountingEngine* counting = engine.get();
    CollectionSession session(settings, logger, std::move(engine));
    session.start();
    session.drain();
    binaries = session.profiled_images();
    ASSERT_TRUE(session.flush());
    absorbs[run] = counting->absorbs;
    ASSERT_TRUE(session.stop());
    written[run] = profile_files(settings.output_dir);
  }
  ASSERT_GE(binaries, 2u) << "the recording should give several binaries";
  // One before each binary and one before collection.json; none when the interval never ends.
  EXPECT_GE(absorbs[0], static_cast<int>(binaries) + 1);
  EXPECT_EQ(absorbs[1], 0);
  EXPECT_EQ(written[0], written[1]) << "absorbing changes nothing written";
}

}  // namespace
}  // namespace profcollect::test
