// Live Arm SPE collection without SPE hardware: a data area holding PERF_RECORD_AUX records laid
// out as the kernel writes them (struct { header; u64 aux_offset, aux_size, flags; sample_id }),
// an AUX area holding packets made by the fixture encoder from the architecture's encodings, and
// the live source (LiveRecordSource + SpeLiveReader) between them. The samples that come out are
// compared with what was encoded, exactly: per-PC counts, branch edges and their mispredictions,
// threads (CONTEXT packets, else the context-switch side-band), the AUX flags counted, and
// aux_tail given back only for bytes a PERF_RECORD_AUX announced and the decoder consumed.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <map>
#include <tuple>
#include <vector>

#include "collector/live/event_selection.h"
#include "collector/live/live_record_source.h"
#include "collector/records/side_band_attr.h"
#include "collector/live/spe_pmu.h"
#include "tests/fixtures/spe_writer/spe_packet_encoder.h"
#include "tests/unit/fake_ring_buffer.h"
#include "tests/unit/perf_record_builder.h"

// Records are spelled with designated initializers naming only the fields that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace profcollect {
namespace {

namespace pb = perfbuild;
using spe_fixture::SpePacketEncoder;
using spe_fixture::SpeRecordSpec;
using test::FakeAuxArea;
using test::FakeRingBuffer;

constexpr uint32_t kSpeType = 8;
constexpr uint64_t kSpeId = 11, kDummyId = 12;
constexpr uint32_t kCpu = 3;
constexpr uint64_t kEventsRetired = 0x2, kEventsNotTaken = 0x40, kEventsMispredicted = 0x80;

using Edge = std::tuple<uint64_t, uint64_t, bool>;  // from, to, mispredicted

struct Expected {
  std::map<uint64_t, uint64_t> by_pc;
  std::map<Edge, uint64_t> edges;
};

class SpeLiveTest : public ::testing::Test {
 protected:
  explicit SpeLiveTest(uint64_t aux_start = 0) : data_(8192), aux_area_(4096) {
    aux_area_.start_at(aux_start);
    // The attrs as the perf engine opens them: the SPE event of make_sampling_attr, its
    // side-band split off to a dummy event with context switches.
    EventSelection s;
    s.engine = SamplingEngine::Spe;
    s.spe_pmu = SpePmu{"arm_spe_0", kSpeType, 1024};
    s.rate = {false, 1024};
    s.name = "arm_spe_0//u";
    SideBandAttrs split = split_side_band(make_sampling_attr(s, TargetKind::SystemWide));
    split.dummy.context_switch = 1;
    EXPECT_EQ(split.sampling.type, kSpeType);
    EXPECT_EQ(split.sampling.sample_type & PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IDENTIFIER);
    battr_.sample_type = split.dummy.sample_type;  // the builder writes the same trailer
    battr_.flags = pb::kFlagSampleIdAll;
    rb_ = std::make_unique<RingBuffer>(data_.reader());
    aux_ = std::make_unique<AuxBuffer>(aux_area_.reader());
    source_ = std::make_unique<LiveRecordSource>(
        std::vector<LiveAttr>{{split.sampling, {kSpeId}, "arm_spe_0//u"},
                              {split.dummy, {kDummyId}, "dummy:u"}},
        std::vector<RingBuffer*>{rb_.get()});
    // The kernel's counter -> perf time conversion in the control page: time = 1000 + ts * 3 / 2.
    perf_event_mmap_page* pc = aux_area_.control();
    pc->cap_user_time_zero = 1;
    pc->time_zero = 1000;
    pc->time_mult = 3;
    pc->time_shift = 1;
    source_->read_spe(kSpeType, {{aux_.get(), kCpu}});
  }

  static uint64_t perf_time(uint64_t ts) { return 1000 + ts * 3 / 2; }

  pb::SampleId at(uint64_t time, uint64_t id = kDummyId, uint32_t pid = 0, uint32_t tid = 0) {
    return pb::SampleId{.pid = pid, .tid = tid, .cpu = kCpu, .time = time, .id = id};
  }

  // The kernel's PERF_RECORD_AUX for the AUX bytes [offset, offset + size), written by the SPE
  // event (its id) in interrupt context (the trailer's pid/tid are whatever ran).
  void aux_record(uint64_t offset, uint64_t size, uint64_t flags, uint64_t time) {
    pb::Bytes b;
    b.u64(offset).u64(size).u64(flags);
    ASSERT_TRUE(data_.write(
        pb::record(PERF_RECORD_AUX, 0, pb::trailer(b, at(time, kSpeId, 7, 7), battr_))));
  }
  void comm(uint32_t pid, uint32_t tid, uint64_t time) {
    ASSERT_TRUE(
        data_.write(pb::comm(pid, tid, "prog", false, at(time, kDummyId, pid, tid), battr_)));
  }
  // PERF_RECORD_SWITCH_CPU_WIDE, switch-out: next_prev_pid/tid name the task coming in.
  void switch_to(uint32_t pid, uint32_t tid, uint64_t time) {
    pb::Bytes b;
    b.u32(pid).u32(tid);
    ASSERT_TRUE(data_.write(pb::record(PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT,
                                       pb::trailer(b, at(time, kDummyId, 1, 1), battr_))));
  }

  // Encodes `n` records at each of the PCs with a branch and what it expects of them.
  static void encode(SpePacketEncoder& e, const SpeRecordSpec& r, int n, Expected& want) {
    for (int i = 0; i < n; ++i) spe_fixture::encode_record(e, r);
    want.by_pc[r.pc] += n;
    if (r.op_class == 2 && !(r.events & kEventsNotTaken) && r.target)
      want.edges[{r.pc, *r.target, (r.events & kEventsMispredicted) != 0}] += n;
  }

  // Everything ready, the samples kept (their branch stack is a view valid until the next
  // record: the edges are counted into seen_ as they come).
  std::vector<SampleRecord> samples() {
    std::vector<SampleRecord> out;
    Record r;
    while (source_->next(r)) {
      if (const auto* s = std::get_if<SampleRecord>(&r)) {
        out.push_back(*s);
        ++seen_.by_pc[s->ip];
        for (const BranchEntry& b : s->branches) seen_.edges[{b.from, b.to, (b.flags & 1) != 0}]++;
        out.back().branches = {};
      }
    }
    return out;
  }
  const Expected& seen(const std::vector<SampleRecord>&) const { return seen_; }

  Expected seen_;

  pb::Attr battr_;
  FakeRingBuffer data_;
  FakeAuxArea aux_area_;
  std::unique_ptr<RingBuffer> rb_;
  std::unique_ptr<AuxBuffer> aux_;
  std::unique_ptr<LiveRecordSource> source_;
};

TEST_F(SpeLiveTest, AnnouncedBytesBecomeSamplesOfTheirPcsAndBranches) {
  comm(100, 101, 500);
  SpePacketEncoder e;
  Expected want;
  uint64_t ts = 100;
  auto rec = [&](SpeRecordSpec r) {
    r.context = 101;
    r.timestamp = ts += 2;
    return r;
  };
  encode(e, rec({.pc = 0x400100, .op_class = 2, .target = 0x400180}), 5, want);
  encode(e,
         rec({.pc = 0x400200,
              .op_class = 2,
              .target = 0x400100,
              .events = kEventsRetired | kEventsMispredicted}),
         3, want);
  encode(e,
         rec({.pc = 0x400204,
              .op_class = 2,
              .subclass = 1,
              .target = 0x400300,
              .events = kEventsRetired | kEventsNotTaken}),
         4, want);
  encode(e, rec({.pc = 0x400208, .op_class = 1, .data_va = 0x7fff0000}), 2, want);
  ASSERT_TRUE(aux_area_.write(e.bytes));
  aux_record(0, e.bytes.size(), 0, 5000);
  EXPECT_EQ(aux_area_.tail(), 0u);
  source_->drain();
  EXPECT_EQ(aux_area_.tail(), e.bytes.size()) << "the announced bytes go back once decoded";
  source_->finish();
  const auto got = samples();
  ASSERT_EQ(got.size(), 14u);
  EXPECT_EQ(seen(got).by_pc, want.by_pc);
  EXPECT_EQ(seen(got).edges, want.edges);
  EXPECT_EQ(want.edges.size(), 2u);  // the not-taken branch and the load make no edge
  for (const SampleRecord& s : got) {
    EXPECT_EQ(s.pid, 100u);
    EXPECT_EQ(s.tid, 101u);
    EXPECT_EQ(s.cpu, kCpu);
    EXPECT_EQ(s.cpumode, CpuMode::User);
    EXPECT_EQ(s.attr_index, 0u);
  }
  EXPECT_EQ(got.front().time, perf_time(102));
  EXPECT_EQ(got.back().time, perf_time(108));  // one timestamp per kind of record
  EXPECT_EQ(source_->session().spe.records, 14u);
  EXPECT_EQ(source_->session().spe.taken_branches, 8u);
  EXPECT_EQ(source_->session().spe.bytes_skipped, 0u);
  EXPECT_EQ(source_->counters().aux_records, 1u);
  EXPECT_EQ(source_->counters().aux_bytes, e.bytes.size());
  EXPECT_EQ(source_->spe()->counters().threads_from_context, 14u);
}

TEST_F(SpeLiveTest, BytesNotYetAnnouncedStayTheReaders) {
  SpePacketEncoder first, second;
  Expected want;
  encode(first, {.pc = 0x400100, .op_class = 2, .target = 0x400180, .context = 9, .timestamp = 10},
         4, want);
  encode(second, {.pc = 0x400200, .op_class = 0, .context = 9, .timestamp = 20}, 3, want);
  ASSERT_TRUE(aux_area_.write(first.bytes));
  aux_record(0, first.bytes.size(), 0, 2000);
  // The hardware has written the second chunk (aux_head moved) but the kernel has not yet
  // announced it: the reader must not give it back.
  ASSERT_TRUE(aux_area_.write(second.bytes));
  source_->drain();
  EXPECT_EQ(aux_area_.tail(), first.bytes.size());
  aux_record(first.bytes.size(), second.bytes.size(), 0, 3000);
  source_->drain();
  EXPECT_EQ(aux_area_.tail(), first.bytes.size() + second.bytes.size());
  source_->finish();
  const auto got = samples();
  EXPECT_EQ(seen(got).by_pc, want.by_pc);
  EXPECT_EQ(seen(got).edges, want.edges);
}

TEST_F(SpeLiveTest, FlagsAreCountedAndTruncatedDataStillDecoded) {
  SpePacketEncoder a, b, c;
  Expected want;
  encode(a, {.pc = 0x400100, .op_class = 2, .target = 0x400180, .context = 9, .timestamp = 10}, 2,
         want);
  encode(b, {.pc = 0x400104, .op_class = 0, .context = 9, .timestamp = 20}, 3, want);
  encode(c, {.pc = 0x400108, .op_class = 0, .context = 9, .timestamp = 30}, 1, want);
  uint64_t off = 0;
  for (auto [bytes, flags] :
       {std::pair{&a.bytes, uint64_t{PERF_AUX_FLAG_TRUNCATED}},
        std::pair{&b.bytes, uint64_t{PERF_AUX_FLAG_PARTIAL | PERF_AUX_FLAG_COLLISION}},
        std::pair{&c.bytes, uint64_t{PERF_AUX_FLAG_COLLISION}}}) {
    ASSERT_TRUE(aux_area_.write(*bytes));
    aux_record(off, bytes->size(), flags, 2000 + off);
    off += bytes->size();
  }
  // A TRUNCATED record with no data: the area was full and the event stopped.
  aux_record(off, 0, PERF_AUX_FLAG_TRUNCATED, 9000);
  source_->drain();
  EXPECT_EQ(source_->spe()->counters().truncated, 2u)
      << "known at the drain (the engine restarts the event)";
  source_->finish();
  const auto got = samples();
  EXPECT_EQ(seen(got).by_pc, want.by_pc);
  const LiveCounters& k = source_->counters();
  EXPECT_EQ(k.aux_records, 4u);
  EXPECT_EQ(k.aux_truncated, 2u);
  EXPECT_EQ(k.aux_partial, 1u);
  EXPECT_EQ(k.aux_collisions, 2u);
  EXPECT_EQ(aux_area_.tail(), off);
}

TEST_F(SpeLiveTest, RecordsWithoutContextTakeTheCpusTaskFromTheSwitchSideBand) {
  comm(200, 201, 10);
  comm(300, 301, 11);
  switch_to(200, 201, perf_time(50));
  switch_to(300, 301, perf_time(150));
  SpePacketEncoder e;
  Expected before, after;
  encode(e, {.pc = 0x400100, .op_class = 0, .timestamp = 100}, 1, before);
  encode(e, {.pc = 0x400104, .op_class = 0, .timestamp = 120}, 1, before);
  encode(e, {.pc = 0x400108, .op_class = 0, .timestamp = 200}, 1, after);
  ASSERT_TRUE(aux_area_.write(e.bytes));
  aux_record(0, e.bytes.size(), 0, perf_time(300));
  source_->drain();
  source_->finish();
  const auto got = samples();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].tid, 201u);
  EXPECT_EQ(got[0].pid, 200u);
  EXPECT_EQ(got[1].tid, 201u);
  EXPECT_EQ(got[2].tid, 301u);
  EXPECT_EQ(got[2].pid, 300u);
  EXPECT_EQ(source_->spe()->counters().threads_from_switches, 3u);
  EXPECT_EQ(source_->session().spe.records_without_thread, 3u);  // no CONTEXT packet
}

// The AUX area wraps: the records that straddle its end are read whole.
class SpeLiveWrapTest : public SpeLiveTest {
 protected:
  SpeLiveWrapTest() : SpeLiveTest(3 * 4096 + 4096 - 37) {}
};

TEST_F(SpeLiveWrapTest, ARangeAcrossTheEndOfTheAreaIsReadWhole) {
  const uint64_t start = aux_area_.tail();
  SpePacketEncoder e;
  Expected want;
  for (int i = 0; i < 10; ++i)
    encode(e,
           {.pc = 0x400100 + 4 * static_cast<uint64_t>(i),
            .op_class = 2,
            .target = 0x400800,
            .context = 9,
            .timestamp = 10 + static_cast<uint64_t>(i)},
           1, want);
  ASSERT_GT(e.bytes.size(), 37u);
  ASSERT_TRUE(aux_area_.write(e.bytes));
  aux_record(start, e.bytes.size(), 0, 5000);
  source_->drain();
  source_->finish();
  const auto got = samples();
  EXPECT_EQ(seen(got).by_pc, want.by_pc);
  EXPECT_EQ(seen(got).edges, want.edges);
  EXPECT_EQ(source_->spe()->counters().wrapped_ranges, 1u);
  EXPECT_EQ(source_->session().spe.bytes_skipped, 0u);
  EXPECT_EQ(aux_area_.tail(), start + e.bytes.size());
}

TEST_F(SpeLiveTest, ARangeTheKernelCannotHaveWrittenIsSkipped) {
  SpePacketEncoder e;
  Expected want;
  encode(e, {.pc = 0x400100, .op_class = 0, .context = 9, .timestamp = 10}, 2, want);
  ASSERT_TRUE(aux_area_.write(e.bytes));
  aux_record(0, 8192, 0, 1000);  // larger than the area
  aux_record(0, e.bytes.size(), 0, 2000);
  source_->drain();
  source_->finish();
  EXPECT_EQ(seen(samples()).by_pc, want.by_pc);
  EXPECT_EQ(source_->spe()->counters().invalid_ranges, 1u);
  EXPECT_EQ(aux_area_.tail(), e.bytes.size());
}

}  // namespace
}  // namespace profcollect
