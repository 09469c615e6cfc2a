// Live Arm SPE collection into the one pipeline, without SPE hardware: the AUX bytes of the SPE
// fixture (records of the arm64 test program's real instructions, tests/fixtures/
// make_spe_fixtures.sh) are fed through the live path -- an AUX area written as the SPE driver
// writes it (wrapping around its end) and a data area holding the kernel's PERF_RECORD_AUX for
// each piece, with the program's COMM and MMAP2 -- into LiveRecordSource and SamplePipeline.
// Judged by Linux perf's decode of the same bytes (the fixture perf.data): the profile's
// per-address counts equal the IPs of `perf script --itrace=i1i` in the program, and its taken
// branches (one edge per record) equal the taken branch records of `perf report -D`, with their
// mispredictions.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "collector/live/event_selection.h"
#include "collector/live/live_record_source.h"
#include "collector/pipeline/sample_pipeline.h"
#include "collector/records/side_band_attr.h"
#include "collector/aux/spe_packet_decoder.h"
#include "mapper/target_image_selector.h"
#include "tests/integration/spe_fixtures.h"
#include "tests/integration/test_support.h"
#include "tests/unit/fake_ring_buffer.h"
#include "tests/unit/perf_record_builder.h"

namespace profcollect::test {
namespace {

namespace pb = perfbuild;

constexpr uint32_t kSpeType = 8;
constexpr uint64_t kSpeId = 11, kDummyId = 12;
constexpr size_t kAuxSize = 4096;

using Edges = std::map<std::pair<uint64_t, uint64_t>, BranchCounts>;

class SpeLivePipeline : public SpeFixtureTest {
 protected:
  void SetUp() override {
    SpeFixtureTest::SetUp();
    if (!have_executable("perf")) GTEST_SKIP() << "perf not found";
  }
};

// perf's view of the fixture: the program's mapping, and the taken branch records (PC at EL0
// with a target and without NOT-TAKEN) with their mispredictions.
struct PerfView {
  uint32_t pid = 0, tid = 0;
  uint64_t start = 0, len = 0;
  std::map<uint64_t, uint64_t> ips;  // in the mapping
  Edges edges;
};

PerfView perf_view(const std::string& data) {
  PerfView v;
  const CommandResult script = run_command(
      {"perf", "script", "-i", data, "--itrace=i1i", "-F", "pid,tid,ip", "--show-mmap-events"});
  EXPECT_EQ(script.exit_code, 0) << script.err;
  static const std::regex mmap(
      R"(PERF_RECORD_MMAP2 (\d+)/(\d+): \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ 0 .*spe_loop$)");
  static const std::regex sample(R"(^\s*(\d+)/(\d+)\s+([0-9a-f]+)\s*$)");
  for (const std::string& l : split_lines(script.out)) {
    std::smatch m;
    if (std::regex_search(l, m, mmap)) {
      v.pid = static_cast<uint32_t>(std::stoul(m[1]));
      v.tid = static_cast<uint32_t>(std::stoul(m[2]));
      v.start = std::stoull(m[3], nullptr, 16);
      v.len = std::stoull(m[4], nullptr, 16);
    } else if (std::regex_match(l, m, sample)) {
      const uint64_t ip = std::stoull(m[3], nullptr, 16);
      if (ip >= v.start && ip - v.start < v.len) ++v.ips[ip];
    }
  }
  for (const PerfDumpTakenBranch& t : perf_dump_taken_branches(data)) {
    BranchCounts& c = v.edges[{t.pc, t.target}];
    ++c.count;
    c.mispredicts += t.mispredicted;
  }
  return v;
}

// Cut points of the AUX bytes at record ends, no piece over `most` bytes: each PERF_RECORD_AUX
// announces whole records, as the SPE driver ends its pieces.
std::vector<size_t> record_cuts(const std::vector<uint8_t>& aux, size_t most) {
  spe::SpePacketDecoder d(aux);
  spe::Record r;
  std::vector<size_t> cuts;
  size_t last = 0, previous_end = 0;
  while (d.next(r)) {
    if (d.position() - last > most) {
      cuts.push_back(previous_end);
      last = previous_end;
    }
    previous_end = d.position();
  }
  cuts.push_back(aux.size());
  return cuts;
}

TEST_F(SpeLivePipeline, ProfileOfTheLivePathIsPerfsDecodeOfTheSameBytes) {
  const PerfView want = perf_view(fixture("spe_loop.data").string());
  ASSERT_GT(want.len, 0u);
  ASSERT_GT(want.ips.size(), 5u);
  ASSERT_GT(want.edges.size(), 3u);
  const std::string bytes = read_file(fixture("spe_loop.aux"));
  const std::vector<uint8_t> aux(bytes.begin(), bytes.end());
  ASSERT_GT(aux.size(), 4 * kAuxSize) << "enough to wrap the area several times";

  // The attrs as the perf engine opens them.
  EventSelection s;
  s.engine = SamplingEngine::Spe;
  s.spe_pmu = SpePmu{"arm_spe_0", kSpeType, 1024};
  s.rate = {false, 1024};
  s.name = "arm_spe_0//u";
  SideBandAttrs split = split_side_band(make_sampling_attr(s, TargetKind::SystemWide));
  split.dummy.context_switch = 1;
  pb::Attr battr;
  battr.sample_type = split.dummy.sample_type;
  battr.flags = pb::kFlagSampleIdAll;

  FakeRingBuffer data(1 << 16);
  FakeAuxArea area(kAuxSize);
  area.start_at(5 * kAuxSize - 700);  // a long run: the first pieces wrap around the end
  perf_event_mmap_page* pc = area.control();
  pc->cap_user_time_zero = 1;
  pc->time_mult = 1;  // perf time = SPE timestamp
  RingBuffer rb = data.reader();
  AuxBuffer aux_buffer = area.reader();
  LiveRecordSource source(
      {{split.sampling, {kSpeId}, s.name}, {split.dummy, {kDummyId}, "dummy:u"}}, {&rb});
  source.read_spe(kSpeType, {{&aux_buffer, 0}});

  auto side = [&](uint64_t id, uint64_t time) {
    return pb::SampleId{.pid = want.pid, .tid = want.tid, .cpu = 0, .time = time, .id = id};
  };
  ASSERT_TRUE(data.write(pb::comm(want.pid, want.tid, "spe_loop", true, side(kDummyId, 0), battr)));
  pb::Mmap2 m{.pid = want.pid,
              .tid = want.tid,
              .start = want.start,
              .len = want.len,
              .pgoff = 0,
              .file = fixture("spe_loop").string()};
  ASSERT_TRUE(data.write(pb::mmap2(m, side(kDummyId, 0), battr)));

  auto target = LoadedImage::open_file(fixture("spe_loop").string());
  TargetImageSelector selector(target, true, nullptr);
  PipelineOptions po;
  po.branch_ranges = false;
  SamplePipeline pipeline(selector, po);
  auto consume_ready = [&] {
    Record r;
    while (source.next(r)) pipeline.consume(r);
  };

  uint64_t offset = area.tail(), done = 0, time = 1;
  for (size_t cut : record_cuts(aux, 1500)) {
    const std::vector<uint8_t> piece(aux.begin() + static_cast<std::ptrdiff_t>(done),
                                     aux.begin() + static_cast<std::ptrdiff_t>(cut));
    ASSERT_TRUE(area.write(piece)) << "the reader gave the earlier pieces back";
    pb::Bytes b;
    b.u64(offset).u64(piece.size()).u64(0);
    // Written on the SPE event's interrupt: its id; its time after the records it announces.
    ASSERT_TRUE(
        data.write(pb::record(PERF_RECORD_AUX, 0, pb::trailer(b, side(kSpeId, time++), battr))));
    source.drain();
    EXPECT_EQ(area.tail(), offset + piece.size());
    consume_ready();
    offset += piece.size();
    done = cut;
  }
  source.finish();
  consume_ready();
  pipeline.settle();

  EXPECT_GE(source.spe()->counters().wrapped_ranges, 4u);
  EXPECT_EQ(source.session().spe.bytes_skipped, 0u);
  EXPECT_EQ(source.session().spe.records_dropped, 0u);
  ASSERT_EQ(pipeline.profiled_slots().size(), 1u);
  const ImageProfile* profile = pipeline.profile(pipeline.profiled_slots()[0]);
  std::map<uint64_t, uint64_t> ips(profile->ips().counts().begin(), profile->ips().counts().end());
  EXPECT_EQ(ips, want.ips);
  EXPECT_GT(profile->samples(), 1000u) << "most of the fixture's 2000 records are in the program";
  const BranchSamples branches = profile->branch_samples();  // a copy: kept while it is read
  Edges edges;
  for (const auto& [branch, counts] : branches.bolt.branches()) {
    EXPECT_FALSE(branch.from_external || branch.to_external);
    edges[{branch.from, branch.to}] = counts;
  }
  EXPECT_EQ(edges, want.edges);
  EXPECT_TRUE(branches.bolt.fall_throughs().empty()) << "one edge per record, no fall-through";
}

}  // namespace
}  // namespace profcollect::test
