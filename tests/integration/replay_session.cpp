#include "tests/integration/replay_session.h"

#include "collector/input/perf_data_reader.h"
#include "collector/pipeline/replay_engine.h"

namespace profcollect::test {

namespace {

class CollectingLogger : public SessionLogger {
 public:
  explicit CollectingLogger(std::vector<std::string>& out) : out_(out) {}
  void note(const std::string&) override {}
  void warning(const std::string& m) override { out_.push_back("warning: " + m); }
  void error(const std::string& m) override { out_.push_back("error: " + m); }

 private:
  std::vector<std::string>& out_;
};

}  // namespace

ReplayResult replay_into(const std::filesystem::path& recording,
                         const std::filesystem::path& output_dir,
                         const std::vector<std::string>& binaries, bool unsymbolized) {
  ReplayResult result;
  CollectingLogger logger(result.warnings);
  SessionSettings settings;
  settings.target.kind = TargetKind::SystemWide;
  settings.output_dir = output_dir.string();
  settings.binaries = binaries;
  settings.unsymbolized = unsymbolized;
  CollectionSession session(settings, logger,
                            std::make_unique<ReplayEngine>(open_perf_data(recording.string())));
  session.start();
  session.drain();
  session.stop();
  result.counts = session.counts();
  return result;
}

}  // namespace profcollect::test
