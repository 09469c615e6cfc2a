// The live collection session's flush, fed a recording (collector/replay_engine.h): a flush with
// nothing new for a binary leaves its files as the last flush wrote them (a long-lived image
// that no longer runs costs no rendering), while collection.json is written every time.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>

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

}  // namespace
}  // namespace profcollect::test
