// `profcollect -a` does not profile itself: its own samples are counted apart in
// collection.json (own_samples, outside samples) and no profile of the profcollect executable is
// written. Profiling itself, each flush would render its own debug info, and the rendering's
// samples would feed the next one (tests/bench/live_rss_bench.sh measured flush peaks of
// +60 MB from it). The pipeline's part is checked sample by sample in
// SamplePipelineTest.TheExcludedProcessIsCountedApartAndProfiledNowhere; this checks the
// session sets it for a system-wide target, with a busy profcollect (a high rate, a 50 ms
// flush interval, so that it runs while it samples).
#include <gtest/gtest.h>

#include "tests/integration/cpu_time.h"
#include "tests/integration/live_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class LiveSystemWideOwnSamples : public LiveFixtureTest {};

TEST_F(LiveSystemWideOwnSamples, CountedApartAndNoProfileOfProfcollectIsWritten) {
  TempDir tmp;
  const fs::path out = tmp / "out";
  // The collector runs from a copy without a build-id: other tests' profcollect processes may
  // run meanwhile (and are profiled: they are not this one), and would share its image by
  // build-id. This copy is mapped by this collector alone, so a directory of its name can only
  // hold its own samples.
  const fs::path collector = tmp / "self_collector";
  const std::vector<std::string> strip = {"objcopy", "--remove-section=.note.gnu.build-id",
                                          profcollect_exe().string(), collector.string()};
  const CommandResult stripped = run_command(strip);
  ASSERT_EQ(stripped.exit_code, 0) << stripped.describe(strip);
  BackgroundProcess spin = start_target(fixture("live_spin"), {"a", "3"});
  const std::vector<std::string> argv = {
      collector.string(), "-a",   "-e",         "cpu-clock", "-F", "4000",
      "--flush-interval", "0.05", "--duration", "1.5",       "-o", out.string()};
  const CommandResult run = run_command(argv);
  ASSERT_EQ(run.exit_code, 0) << run.describe(argv);

  const json collection = read_json_file(out / "collection.json");
  ASSERT_FALSE(collection.is_discarded()) << run.describe(argv);
  ASSERT_TRUE(collection.contains("own_samples")) << collection.dump(2);
  EXPECT_TRUE(collection.at("own_samples").is_number_unsigned()) << collection.dump(2);
  // Every sample taken in is mapped or unmapped by a reason: own samples are neither.
  uint64_t accounted = collection.at("mapped").get<uint64_t>();
  for (const auto& [reason, n] : collection.at("unmapped").items()) accounted += n.get<uint64_t>();
  EXPECT_LE(accounted, collection.at("samples").get<uint64_t>()) << collection.dump(2);

  EXPECT_EQ(profile_dirs(out, collector.filename().string()), std::vector<fs::path>{})
      << "profcollect profiled itself; collection.json:\n"
      << collection.dump(2);
  // The workload was profiled meanwhile: a system-wide run saw it.
  EXPECT_EQ(profile_dirs(out, "live_spin").size(), 1u) << run.describe(argv);
}

}  // namespace
}  // namespace profcollect::test
