// A live collection's later flushes read DWARF only for addresses it had not met (issue 25,
// acceptance 4). live_spin (one compile unit with DWARF) runs spin_a and shared_work without end;
// profcollect collects it with --flush-interval 1 and writes its AutoFDO profile at every flush.
// collection.json's autofdo_symbolization counts, over the run and at the last flush, the
// addresses looked up in DWARF and the walks of a unit's DIEs.
//
// Why this cannot pass by luck: the program has a handful of functions, and a function's
// addresses are new only at the first flush that samples it, so all but a handful of flushes
// re-render a grown profile of addresses already met. Those must walk no unit and look up no
// address. Before the answers were kept between flushes, every flush walked the unit again.
#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "tests/integration/live_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

class LiveSymbolizationTest : public LiveFixtureTest {};

// One flush as the files show it: the binary's samples (meta.json, written before
// collection.json) and collection.json's counts. Read meta.json, collection.json, meta.json:
// when both meta.json reads agree no flush came in between, and the counts are that flush's.
struct FlushState {
  uint64_t end_ns = 0;
  uint64_t samples = 0;  // of live_spin
  uint64_t run_walks = 0, last_walks = 0, last_addresses = 0;
};

std::optional<uint64_t> binary_samples(const fs::path& out) {
  try {
    for (const fs::path& dir : profile_dirs(out, "live_spin"))
      return read_json_file(dir / "meta.json").at("samples").get<uint64_t>();
  } catch (const std::exception&) {
  }
  return std::nullopt;  // not written yet, or being replaced
}

std::optional<FlushState> look(const fs::path& out) {
  const std::optional<uint64_t> before = binary_samples(out);
  if (!before) return std::nullopt;
  FlushState s;
  try {
    const json c = read_json_file(out / "collection.json");
    const json& sym = c.at("autofdo_symbolization");
    s.end_ns = c.at("end_ns").get<uint64_t>();
    s.run_walks = sym.at("dwarf_unit_walks").get<uint64_t>();
    s.last_walks = sym.at("last_flush").at("dwarf_unit_walks").get<uint64_t>();
    s.last_addresses = sym.at("last_flush").at("addresses").get<uint64_t>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::optional<uint64_t> after = binary_samples(out);
  if (!after || *after != *before) return std::nullopt;
  s.samples = *before;
  return s;
}

TEST_F(LiveSymbolizationTest, LaterFlushesOfAddressesMetBeforeReadNoDwarfUnit) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  BackgroundProcess target = start_target(spin, {"a", "0"});
  BackgroundProcess collector = start_profcollect(
      {"-q", "--flush-interval", "1", "-o", out.string(), "--pid", std::to_string(target.pid())});

  // Flushes whose profile of live_spin grew since the flush seen before (so it was rendered
  // again), until eight are seen; a loaded machine stretches the target's CPU time, not the
  // flushes: 60 s at most.
  std::vector<FlushState> grown;
  std::optional<FlushState> last;
  const auto end = std::chrono::steady_clock::now() + 60s;
  while (grown.size() < 8 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(50ms);
    const std::optional<FlushState> now = look(out);
    if (!now || (last && now->end_ns == last->end_ns)) continue;
    if (last && now->samples > last->samples) grown.push_back(*now);
    last = now;
  }
  ASSERT_TRUE(collector.running()) << collector.describe();
  ASSERT_GE(grown.size(), 8u) << "flushes with more samples of live_spin seen in 60 s";

  ASSERT_TRUE(last.has_value());
  EXPECT_GE(last->run_walks, 1u) << "the first profile reads live_spin's unit";
  size_t without_dwarf = 0;
  std::string seen;
  for (const FlushState& s : grown) {
    seen += " (" + std::to_string(s.samples) + " samples: " + std::to_string(s.last_walks) +
            " walks, " + std::to_string(s.last_addresses) + " addresses)";
    if (s.last_walks == 0 && s.last_addresses == 0) ++without_dwarf;
  }
  // live_spin has six functions with code; at most that many flushes meet new ones.
  EXPECT_GE(without_dwarf, grown.size() - 6) << "flushes seen:" << seen;
  EXPECT_GE(without_dwarf, 2u) << "flushes seen:" << seen;
}

}  // namespace
}  // namespace profcollect::test
