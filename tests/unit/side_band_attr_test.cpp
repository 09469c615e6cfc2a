// The side-band split (collector/records/side_band_attr.h): which bits each of the two events carries,
// checked against the perf_event_open ABI (include/uapi/linux/perf_event.h) and against what
// perf 6.1's tracking dummy carries (`perf record -vv -a -e cpu-clock`: type 1, config 0x9,
// sample_period 1, mmap, comm, task, mmap2, comm_exec, sample_id_all; the sampling event none of
// the side-band bits). Then LiveRecordSource reading one buffer that both events write into:
// every record is decoded with its own attr, found by the id the kernel puts in it.
#include "collector/records/side_band_attr.h"

#include <gtest/gtest.h>
#include <time.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "collector/live/event_selection.h"
#include "collector/live/live_record_source.h"
#include "collector/host/proc_maps.h"
#include "collector/live/synthetic_records.h"
#include "tests/unit/fake_ring_buffer.h"
#include "tests/unit/perf_record_builder.h"

namespace profcollect {
namespace {

namespace pb = perfbuild;

struct Case {
  const char* what;
  EventSelection selection;
  TargetKind target;
};

std::vector<Case> cases() {
  EventSelection cpu_clock;
  cpu_clock.engine = SamplingEngine::CpuClock;
  cpu_clock.include_kernel = true;
  cpu_clock.name = "cpu-clock";
  EventSelection user_period = cpu_clock;
  user_period.include_kernel = false;
  user_period.rate = SamplingRate{false, 10007};
  user_period.name = "cpu-clock:u";
  EventSelection lbr;
  lbr.engine = SamplingEngine::BranchStack;
  lbr.include_kernel = false;
  lbr.name = "cycles:u";
  return {{"cpu-clock, command", cpu_clock, TargetKind::Command},
          {"cpu-clock:u by period, --pid", user_period, TargetKind::Processes},
          {"cpu-clock, system-wide", cpu_clock, TargetKind::SystemWide},
          {"cycles:u with a branch stack, command", lbr, TargetKind::Command}};
}

// make_sampling_attr's, with the clock the perf engine chooses.
perf_event_attr sampling_attr(const Case& c, bool with_build_id = true) {
  perf_event_attr a = make_sampling_attr(c.selection, c.target, with_build_id);
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  return a;
}

constexpr uint64_t kTrailerBits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                                  PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

TEST(SideBandAttr, SamplingEventKeepsEverythingButTheSideBand) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.what);
    const perf_event_attr whole = sampling_attr(c);
    ASSERT_EQ(whole.mmap2, 1u);  // the default carries the side-band itself
    const perf_event_attr s = split_side_band(whole).sampling;
    EXPECT_EQ(s.mmap, 0u);
    EXPECT_EQ(s.mmap2, 0u);
    EXPECT_EQ(s.mmap_data, 0u);
    EXPECT_EQ(s.comm, 0u);
    EXPECT_EQ(s.comm_exec, 0u);
    EXPECT_EQ(s.task, 0u);
    EXPECT_EQ(s.build_id, 0u);
    EXPECT_EQ(s.sample_id_all, 1u);  // its LOST and THROTTLE records keep their trailer
    EXPECT_TRUE(s.sample_type & PERF_SAMPLE_IDENTIFIER);
    // Every other byte as make_sampling_attr made it: event, rate, levels, branch stack, start.
    perf_event_attr expected = whole;
    expected.mmap = expected.mmap2 = expected.comm = expected.comm_exec = expected.task = 0;
    expected.build_id = 0;
    expected.sample_type |= PERF_SAMPLE_IDENTIFIER;
    EXPECT_EQ(std::memcmp(&expected, &s, sizeof s), 0);
  }
}

TEST(SideBandAttr, DummyEventCarriesTheSideBandWithTheSamplingEventsTrailerClockAndStart) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.what);
    const perf_event_attr whole = sampling_attr(c);
    const perf_event_attr d = split_side_band(whole).dummy;
    EXPECT_EQ(d.size, sizeof(perf_event_attr));
    EXPECT_EQ(d.type, uint32_t{PERF_TYPE_SOFTWARE});
    EXPECT_EQ(d.config, uint64_t{PERF_COUNT_SW_DUMMY});
    EXPECT_EQ(d.sample_period, 1u);
    EXPECT_EQ(d.freq, 0u);
    // The side-band, as the sampling event carried it; executable mappings only.
    EXPECT_EQ(d.mmap, 1u);
    EXPECT_EQ(d.mmap2, 1u);
    EXPECT_EQ(d.comm, 1u);
    EXPECT_EQ(d.comm_exec, 1u);
    EXPECT_EQ(d.task, 1u);
    EXPECT_EQ(d.build_id, 1u);
    EXPECT_EQ(d.mmap_data, 0u);
    EXPECT_EQ(d.sample_id_all, 1u);
    // perf's dummy: IP|TID|TIME[|CPU]|IDENTIFIER, no PERIOD, no branch stack.
    EXPECT_EQ(d.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                 PERF_SAMPLE_IDENTIFIER);
    EXPECT_EQ(d.branch_sample_type, 0u);
    EXPECT_EQ(d.sample_type & kTrailerBits, whole.sample_type & kTrailerBits)
        << "records of both events in one buffer need one trailer layout";
    // Same buffers: the kernel refuses SET_OUTPUT across clocks.
    EXPECT_EQ(d.use_clockid, 1u);
    EXPECT_EQ(d.clockid, CLOCK_MONOTONIC);
    // Started and inherited with the sampling event.
    EXPECT_EQ(d.disabled, whole.disabled);
    EXPECT_EQ(d.inherit, whole.inherit);
    EXPECT_EQ(d.enable_on_exec, whole.enable_on_exec);
    EXPECT_EQ(d.enable_on_exec, c.target == TargetKind::Command ? 1u : 0u);
    // The levels decide only what the kernel lets this process open.
    EXPECT_EQ(d.exclude_kernel, c.selection.include_kernel ? 0u : 1u);
    EXPECT_EQ(d.exclude_hv, whole.exclude_hv);
    EXPECT_EQ(d.exclude_user, 0u);
    // Nothing the profiler does not read.
    EXPECT_EQ(d.read_format, 0u);
    EXPECT_EQ(d.ksymbol, 0u);
    EXPECT_EQ(d.bpf_event, 0u);
    EXPECT_EQ(d.context_switch, 0u);
  }
}

TEST(SideBandAttr, BuildIdsOnlyWhenTheSamplingAttrAskedForThem) {
  const Case c = cases()[0];
  const SideBandAttrs split = split_side_band(sampling_attr(c, /*with_build_id=*/false));
  EXPECT_EQ(split.dummy.build_id, 0u);
  EXPECT_EQ(split.dummy.mmap2, 1u);
  EXPECT_EQ(split.sampling.build_id, 0u);
}

// ---- One buffer, two events ------------------------------------------------------------------

constexpr uint64_t kSamplingId = 101, kDummyId = 202;

class SharedBufferTest : public ::testing::Test {
 protected:
  SharedBufferTest() : cpu0_(8192), rb_(cpu0_.reader()) {
    const SideBandAttrs split = split_side_band(sampling_attr(cases()[1]));
    sampling_ = split.sampling;
    dummy_ = split.dummy;
    // The builder's views of the same attrs, written from the ABI independently of our decoder.
    bsampling_.sample_type = sampling_.sample_type;
    bsampling_.flags = pb::kFlagSampleIdAll;
    bdummy_.sample_type = dummy_.sample_type;
    bdummy_.flags = pb::kFlagSampleIdAll;
  }

  pb::SampleId trailer(uint64_t time, uint64_t id) {
    pb::SampleId t;
    t.pid = t.tid = 42;
    t.time = time;
    t.id = id;
    return t;
  }

  perf_event_attr sampling_, dummy_;
  pb::Attr bsampling_, bdummy_;
  test::FakeRingBuffer cpu0_;
  RingBuffer rb_;
};

TEST_F(SharedBufferTest, EachRecordIsDecodedWithTheAttrItsIdNames) {
  LiveRecordSource source(
      {LiveAttr{sampling_, {kSamplingId}, "cpu-clock:u"}, LiveAttr{dummy_, {kDummyId}, "dummy:u"}},
      {&rb_});
  ASSERT_EQ(source.session().attrs.size(), 2u);
  EXPECT_EQ(source.session().attrs[0].name, "cpu-clock:u");
  EXPECT_EQ(source.session().attrs[1].name, "dummy:u");

  // As the kernel writes them: the dummy's COMM and MMAP2 (exec of the program), then samples.
  pb::Mmap2 m;
  m.pid = m.tid = 42;
  m.start = 0x400000;
  m.len = 0x2000;
  m.pgoff = 0x1000;
  m.build_id = {0xde, 0xad, 0xbe, 0xef};
  m.file = "/usr/bin/prog";
  ASSERT_TRUE(cpu0_.write(pb::comm(42, 42, "prog", true, trailer(10, kDummyId), bdummy_)));
  ASSERT_TRUE(cpu0_.write(pb::mmap2(m, trailer(11, kDummyId), bdummy_)));
  pb::Sample s;
  s.identifier = kSamplingId;
  s.ip = 0x401234;
  s.pid = s.tid = 42;
  s.time = 12;
  s.period = 10007;
  ASSERT_TRUE(cpu0_.write(pb::sample(s, bsampling_)));
  ASSERT_TRUE(cpu0_.write(pb::lost(kSamplingId, 3, trailer(13, kSamplingId), bsampling_)));
  // A process that ran before: synthesized with the layout the source gives (the first attr's).
  ProcMapsEntry e;
  e.start = 0x7f0000000000;
  e.end = 0x7f0000003000;
  e.prot = 5;   // PROT_READ | PROT_EXEC
  e.flags = 2;  // MAP_PRIVATE
  e.path = "/usr/lib/libwork.so";
  std::vector<uint8_t> synthesized;
  append_mmap2_record(synthesized, source.sample_id_layout(), 42, 42, e);
  source.add_synthesized(synthesized);

  source.drain();
  source.finish();
  std::vector<std::string> seen;
  Record r;
  while (source.next(r)) {
    if (const auto* mm = std::get_if<MmapRecord>(&r)) {
      seen.push_back("MMAP2 " + std::string(mm->filename) + " @" + std::to_string(mm->time));
      if (mm->filename == "/usr/bin/prog") {
        EXPECT_EQ(mm->start, 0x400000u);
        EXPECT_EQ(mm->len, 0x2000u);
        EXPECT_EQ(mm->pgoff, 0x1000u);
        EXPECT_EQ(mm->build_id.to_hex(), "deadbeef");
      }
    } else if (const auto* c = std::get_if<CommRecord>(&r)) {
      seen.push_back("COMM " + std::string(c->comm) + " @" + std::to_string(c->time));
      EXPECT_TRUE(c->exec);
    } else if (const auto* smp = std::get_if<SampleRecord>(&r)) {
      seen.push_back("SAMPLE @" + std::to_string(smp->time));
      EXPECT_EQ(smp->attr_index, 0u);
      EXPECT_EQ(smp->id, kSamplingId);
      EXPECT_EQ(smp->ip, 0x401234u);
      EXPECT_EQ(smp->period, 10007u);
    } else if (const auto* l = std::get_if<LostRecord>(&r)) {
      seen.push_back("LOST " + std::to_string(l->lost) + " @" + std::to_string(l->time));
    } else {
      seen.push_back("other");
    }
  }
  const std::vector<std::string> expected = {"MMAP2 /usr/lib/libwork.so @0", "COMM prog @10",
                                             "MMAP2 /usr/bin/prog @11", "SAMPLE @12", "LOST 3 @13"};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(source.counters().malformed, 0u);
  EXPECT_EQ(source.counters().samples, 1u);
}

TEST_F(SharedBufferTest, TaskRecordsOfTheDummyComeOutInTimeOrder) {
  // As in the BPF engine's layout, where the buffer holds nothing but the dummy's records.
  LiveRecordSource source(
      {LiveAttr{sampling_, {kSamplingId}, "cpu-clock:u"}, LiveAttr{dummy_, {kDummyId}, "dummy:u"}},
      {&rb_});
  ASSERT_TRUE(cpu0_.write(pb::comm(42, 43, "worker", false, trailer(20, kDummyId), bdummy_)));
  ASSERT_TRUE(cpu0_.write(pb::task(false, 42, 42, 43, 42, 19, trailer(19, kDummyId), bdummy_)));
  source.drain();
  source.finish();
  Record r;
  ASSERT_TRUE(source.next(r));
  ASSERT_TRUE(std::holds_alternative<TaskRecord>(r));
  EXPECT_EQ(std::get<TaskRecord>(r).tid, 43u);
  ASSERT_TRUE(source.next(r));
  ASSERT_TRUE(std::holds_alternative<CommRecord>(r));
  EXPECT_EQ(std::get<CommRecord>(r).comm, "worker");
  EXPECT_FALSE(source.next(r));
}

TEST_F(SharedBufferTest, EventsThatCannotShareABufferAreRefused) {
  perf_event_attr no_identifier = dummy_;
  no_identifier.sample_type &= ~uint64_t{PERF_SAMPLE_IDENTIFIER};
  no_identifier.sample_type |= PERF_SAMPLE_ID;
  EXPECT_THROW(
      LiveRecordSource({LiveAttr{sampling_, {}, "a"}, LiveAttr{no_identifier, {}, "b"}}, {&rb_}),
      std::invalid_argument);
  perf_event_attr other_trailer = dummy_;
  other_trailer.sample_type &= ~uint64_t{PERF_SAMPLE_CPU};
  EXPECT_THROW(
      LiveRecordSource({LiveAttr{sampling_, {}, "a"}, LiveAttr{other_trailer, {}, "b"}}, {&rb_}),
      std::invalid_argument);
  perf_event_attr no_trailer = dummy_;
  no_trailer.sample_id_all = 0;
  EXPECT_THROW(
      LiveRecordSource({LiveAttr{sampling_, {}, "a"}, LiveAttr{no_trailer, {}, "b"}}, {&rb_}),
      std::invalid_argument);
  // One attr needs neither.
  EXPECT_NO_THROW(LiveRecordSource({LiveAttr{no_trailer, {}, "b"}}, {&rb_}));
}

}  // namespace
}  // namespace profcollect
