// LiveRecordSource over ring buffers in memory: records of several CPUs come out in time order
// after the round that follows them, synthesized records first, losses and throttling counted,
// and a warm drain() allocates nothing.
#include "collector/live/live_record_source.h"

#include <gtest/gtest.h>

#include "collector/live/event_selection.h"
#include "collector/host/proc_maps.h"
#include "tests/support/allocation_counter.h"
#include "tests/unit/fake_ring_buffer.h"
#include "tests/unit/perf_record_builder.h"

namespace profcollect {
namespace {

namespace pb = perfbuild;
using test::FakeRingBuffer;

class LiveSourceTest : public ::testing::Test {
 protected:
  LiveSourceTest() : cpu0_(4096), cpu1_(4096), rb0_(cpu0_.reader()), rb1_(cpu1_.reader()) {
    EventSelection s;
    s.name = "cpu-clock";
    attr_ = make_sampling_attr(s, TargetKind::Processes);
    // The builder's view of the same attr, written from the ABI independently of our decoder.
    battr_.sample_type = attr_.sample_type;
    battr_.flags = pb::kFlagSampleIdAll;
    source_ = std::make_unique<LiveRecordSource>(
        attr_, std::span<const uint64_t>{}, std::vector<RingBuffer*>{&rb0_, &rb1_}, "cpu-clock");
  }

  std::vector<uint8_t> sample(uint64_t time, uint32_t cpu, uint64_t ip = 0x401000) {
    pb::Sample s;
    s.ip = ip;
    s.pid = s.tid = 42;
    s.time = time;
    s.cpu = cpu;
    s.period = 250000;
    return pb::sample(s, battr_);
  }
  pb::SampleId at(uint64_t time, uint32_t cpu) {
    pb::SampleId t;
    t.pid = t.tid = 42;
    t.time = time;
    t.cpu = cpu;
    return t;
  }

  // Everything ready now, as (kind, time) strings: "S10", "M5", "C0".
  std::vector<std::string> take() {
    std::vector<std::string> out;
    Record r;
    while (source_->next(r)) {
      std::string kind = std::visit(
          [](const auto& rec) -> std::string {
            using T = std::decay_t<decltype(rec)>;
            if constexpr (std::is_same_v<T, SampleRecord>) return "S";
            if constexpr (std::is_same_v<T, MmapRecord>) return "M";
            if constexpr (std::is_same_v<T, CommRecord>) return "C";
            if constexpr (std::is_same_v<T, LostRecord>) return "L";
            if constexpr (std::is_same_v<T, ThrottleRecord>) return "T";
            if constexpr (std::is_same_v<T, AuxRecord>) return "A";
            return "O";
          },
          r);
      out.push_back(kind + std::to_string(RecordDecoder::time_of(r)));
    }
    return out;
  }

  perf_event_attr attr_;
  pb::Attr battr_;
  FakeRingBuffer cpu0_, cpu1_;
  RingBuffer rb0_, rb1_;
  std::unique_ptr<LiveRecordSource> source_;
};

TEST_F(LiveSourceTest, MergesCpusInTimeOrderAfterTheNextRound) {
  ASSERT_TRUE(cpu0_.write(sample(10, 0)));
  ASSERT_TRUE(cpu0_.write(sample(30, 0)));
  ASSERT_TRUE(cpu0_.write(sample(50, 0)));
  pb::Mmap2 m;
  m.pid = m.tid = 42;
  m.start = 0x400000;
  m.len = 0x2000;
  m.file = "/bin/app";
  ASSERT_TRUE(cpu1_.write(pb::mmap2(m, at(5, 1), battr_)));
  ASSERT_TRUE(cpu1_.write(sample(20, 1)));
  ASSERT_TRUE(cpu1_.write(sample(40, 1)));
  ASSERT_TRUE(cpu1_.write(sample(60, 1)));

  EXPECT_EQ(source_->drain(), cpu0_.head() + cpu1_.head());
  // Nothing older than the previous round's newest record exists yet: all wait.
  EXPECT_TRUE(take().empty());
  EXPECT_EQ(cpu0_.tail(), cpu0_.head());  // the buffers are given back at once
  EXPECT_EQ(cpu1_.tail(), cpu1_.head());

  ASSERT_TRUE(cpu0_.write(sample(70, 0)));
  source_->drain();
  EXPECT_EQ(take(), (std::vector<std::string>{"M5", "S10", "S20", "S30", "S40", "S50", "S60"}));
  source_->drain();
  EXPECT_EQ(take(), (std::vector<std::string>{"S70"}));

  EXPECT_EQ(source_->counters().samples, 7u);
  EXPECT_EQ(source_->counters().records, 8u);
  EXPECT_EQ(source_->counters().passes, 3u);
  EXPECT_EQ(source_->bytes_read(), cpu0_.head() + cpu1_.head());
  ASSERT_EQ(source_->session().attrs.size(), 1u);
  EXPECT_EQ(source_->session().attrs[0].name, "cpu-clock");
}

TEST_F(LiveSourceTest, LateRecordOfAnotherCpuStillSortsInItsRound) {
  // CPU 1's record at 15 is read one pass after CPU 0's at 20 (it was published late).
  ASSERT_TRUE(cpu0_.write(sample(20, 0)));
  source_->drain();
  ASSERT_TRUE(cpu1_.write(sample(15, 1)));
  ASSERT_TRUE(cpu0_.write(sample(25, 0)));
  source_->drain();
  EXPECT_EQ(take(), (std::vector<std::string>{"S15", "S20"}));
  source_->finish();
  EXPECT_EQ(take(), (std::vector<std::string>{"S25"}));
}

TEST_F(LiveSourceTest, SynthesizedRecordsComeFirst) {
  std::vector<uint8_t> synth;
  append_comm_record(synth, source_->sample_id_layout(), 42, 42, "app");
  auto line = parse_proc_maps_line("400000-402000 r-xp 00000000 08:01 99 /bin/app");
  append_mmap2_record(synth, source_->sample_id_layout(), 42, 42, *line);

  ASSERT_TRUE(cpu0_.write(sample(10, 0)));
  source_->add_synthesized(synth);
  EXPECT_EQ(source_->counters().synthesized, 2u);
  source_->drain();
  EXPECT_EQ(take(), (std::vector<std::string>{"C0", "M0"}));
  source_->finish();
  EXPECT_EQ(take(), (std::vector<std::string>{"S10"}));
}

TEST_F(LiveSourceTest, CountsLossesAndThrottling) {
  ASSERT_TRUE(cpu0_.write(pb::lost(7, 17, at(10, 0), battr_)));
  ASSERT_TRUE(cpu0_.write(pb::lost(7, 3, at(11, 0), battr_)));
  ASSERT_TRUE(cpu1_.write(pb::lost_samples(5, at(12, 1), battr_)));
  ASSERT_TRUE(cpu1_.write(pb::throttle(false, 13, 7, at(13, 1), battr_)));
  ASSERT_TRUE(cpu1_.write(pb::throttle(true, 14, 7, at(14, 1), battr_)));
  source_->drain();
  source_->finish();
  EXPECT_EQ(take(), (std::vector<std::string>{"L10", "L11", "L12", "T13", "T14"}));
  // Counted as they are decoded, once, on the way out.
  const LiveCounters& c = source_->counters();
  EXPECT_EQ(c.lost_records, 2u);
  EXPECT_EQ(c.lost_samples, 20u);
  EXPECT_EQ(c.dropped_samples, 5u);
  EXPECT_EQ(c.throttles, 1u);
  EXPECT_EQ(c.unthrottles, 1u);
  EXPECT_EQ(c.samples, 0u);
}

// PERF_RECORD_AUX (u64 aux_offset, aux_size, flags, then the trailer), as an AUX event writes
// it into its data area: decoded into AuxRecord and counted with its bytes and lossy flags.
TEST_F(LiveSourceTest, CountsAuxRecords) {
  auto aux = [this](uint64_t offset, uint64_t size, uint64_t flags, uint64_t time) {
    pb::Bytes b;
    b.u64(offset).u64(size).u64(flags);
    return pb::record(11, 0, pb::trailer(b, at(time, 0), battr_));
  };
  ASSERT_TRUE(cpu0_.write(aux(0, 4096, 0, 10)));
  ASSERT_TRUE(cpu0_.write(aux(4096, 1024, 0x01, 11)));          // TRUNCATED
  ASSERT_TRUE(cpu0_.write(aux(5120, 512, 0x08 | 0x0100, 12)));  // COLLISION, SPE's format
  source_->drain();
  source_->finish();
  EXPECT_EQ(take(), (std::vector<std::string>{"A10", "A11", "A12"}));
  const LiveCounters& c = source_->counters();
  EXPECT_EQ(c.aux_records, 3u);
  EXPECT_EQ(c.aux_bytes, 4096u + 1024 + 512);
  EXPECT_EQ(c.aux_truncated, 1u);
  EXPECT_EQ(c.aux_collisions, 1u);
  EXPECT_EQ(c.malformed, 0u);
}

TEST_F(LiveSourceTest, SampleFieldsSurviveWrappedRecords) {
  // Many passes through a 4 KiB buffer: records wrap around its end again and again.
  uint64_t t = 1;
  size_t seen = 0;
  for (int pass = 0; pass < 50; ++pass) {
    for (int i = 0; i < 30; ++i, ++t) ASSERT_TRUE(cpu0_.write(sample(t, 0, 0x400000 + t)));
    source_->drain();
    Record r;
    while (source_->next(r)) {
      const auto& s = std::get<SampleRecord>(r);
      EXPECT_EQ(s.ip, 0x400000 + s.time);
      EXPECT_EQ(s.pid, 42u);
      EXPECT_EQ(s.cpu, 0u);
      EXPECT_EQ(s.period, 250000u);
      ++seen;
    }
  }
  source_->finish();
  Record r;
  while (source_->next(r)) ++seen;
  EXPECT_EQ(seen, t - 1);
  EXPECT_GT(cpu0_.head(), 10u * 4096);
}

TEST_F(LiveSourceTest, WarmDrainAllocatesNothing) {
  auto fill = [&](uint64_t& t) {
    for (int i = 0; i < 40; ++i, ++t) {
      ASSERT_TRUE(cpu0_.write(sample(t, 0)));
      ASSERT_TRUE(cpu1_.write(sample(t, 1)));
    }
  };
  uint64_t t = 1;
  Record r;
  for (int warm = 0; warm < 8; ++warm) {
    fill(t);
    source_->drain();
    while (source_->next(r)) {
    }
  }
  size_t allocations = 0;
  for (int pass = 0; pass < 8; ++pass) {
    fill(t);
    test::AllocationCounter counter;
    source_->drain();
    size_t n = 0;
    while (source_->next(r)) ++n;
    counter.stop();
    allocations += counter.count();
    EXPECT_GT(n, 0u);
  }
  EXPECT_EQ(allocations, 0u);
}

// The attr a branch engine asks for (LBR: cycles with BRANCH_STACK, ANY|USER): the ring buffer's
// samples come out with their stacks, newest entry first, every entry's from, to and flags as
// the kernel wrote them (records built from the ABI by perf_record_builder, not by our decoder).
TEST(LiveSourceBranchTest, BranchStacksComeOutAsWritten) {
  EventSelection s;
  s.engine = SamplingEngine::BranchStack;
  s.name = "cycles:u";
  s.rate = SamplingRate{false, 100003};
  const perf_event_attr attr = make_sampling_attr(s, TargetKind::Processes);
  ASSERT_TRUE(attr.sample_type & PERF_SAMPLE_BRANCH_STACK);
  pb::Attr battr;
  battr.sample_type = attr.sample_type;
  battr.branch_sample_type = attr.branch_sample_type;
  battr.flags = pb::kFlagSampleIdAll;
  FakeRingBuffer cpu0(8192);
  RingBuffer rb(cpu0.reader());
  LiveRecordSource source(attr, std::span<const uint64_t>{}, std::vector<RingBuffer*>{&rb},
                          "cycles:u");

  std::vector<std::vector<pb::Branch>> written;
  for (uint64_t t = 1; t <= 3; ++t) {
    pb::Sample smp;
    smp.ip = 0x401000 + t;
    smp.pid = smp.tid = 42;
    smp.time = t * 10;
    smp.period = 100003;
    // mispredicted, predicted, cycles and type bits set differently per entry
    for (uint64_t i = 0; i < 32; ++i) {
      smp.branches.push_back(
          pb::Branch{0x401000 + t * 0x100 + i, 0x402000 + i,
                     (i % 3 == 0 ? 1u : 2u) | ((i * 7 + t) << 4) | ((i % 5) << 20)});
    }
    written.push_back(smp.branches);
    ASSERT_TRUE(cpu0.write(pb::sample(smp, battr)));
  }
  source.drain();
  source.finish();
  Record r;
  size_t n = 0;
  while (source.next(r)) {
    auto* sample = std::get_if<SampleRecord>(&r);
    if (!sample) continue;
    ASSERT_LT(n, written.size());
    ASSERT_TRUE(sample->has_branch_stack);
    ASSERT_EQ(sample->branches.size(), written[n].size());
    for (size_t i = 0; i < written[n].size(); ++i) {
      EXPECT_EQ(sample->branches[i].from, written[n][i].from);
      EXPECT_EQ(sample->branches[i].to, written[n][i].to);
      EXPECT_EQ(sample->branches[i].flags, written[n][i].flags);
    }
    EXPECT_EQ(sample->branches[0].mispredicted(), true);
    EXPECT_EQ(sample->branches[1].predicted(), true);
    EXPECT_EQ(sample->branches[2].cycles(), 2 * 7 + n + 1);
    EXPECT_EQ(sample->branches[4].type(), 4);
    ++n;
  }
  EXPECT_EQ(n, written.size());
}

}  // namespace
}  // namespace profcollect
