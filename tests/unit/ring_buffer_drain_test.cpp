// RingBufferDrain, the drain thread's reader, over ring buffers in memory: a pass copies every
// record of every buffer into a batch and gives the space back; past its budget it leaves out
// samples first and the other records only past their reserve, counting each; a retired buffer
// is read no more. DrainBacklog: its bytes are held until recycled, and room() says what is left.
#include "collector/live/ring_buffer_drain.h"

#include <gtest/gtest.h>

#include "collector/live/drain_backlog.h"
#include "collector/live/event_selection.h"
#include "collector/records/perf_abi.h"
#include "tests/unit/fake_ring_buffer.h"
#include "tests/unit/perf_record_builder.h"

namespace profcollect {
namespace {

namespace pb = perfbuild;
using test::FakeRingBuffer;

class RingBufferDrainTest : public ::testing::Test {
 protected:
  RingBufferDrainTest() : cpu0_(4096), cpu1_(4096), rb0_(cpu0_.reader()), rb1_(cpu1_.reader()) {
    EventSelection s;
    s.name = "cpu-clock";
    const perf_event_attr attr = make_sampling_attr(s, TargetKind::SystemWide);
    battr_.sample_type = attr.sample_type;
    battr_.flags = pb::kFlagSampleIdAll;
  }
  std::vector<uint8_t> sample(uint64_t time) {
    pb::Sample s;
    s.ip = 0x401000;
    s.pid = s.tid = 42;
    s.time = time;
    s.period = 250000;
    return pb::sample(s, battr_);
  }
  std::vector<uint8_t> mmap(uint64_t time) {
    pb::Mmap2 m;
    m.pid = m.tid = 42;
    m.start = 0x400000;
    m.len = 0x1000;
    m.file = "/bin/x";
    pb::SampleId t;
    t.pid = t.tid = 42;
    t.time = time;
    return pb::mmap2(m, t, battr_);
  }
  // The record types of a batch, in order: "S" samples, "M" MMAP2.
  static std::string kinds(const RecordBatch& b) {
    std::string out;
    for (const auto& p : b.pieces) {
      const uint32_t type = perf_abi::load<uint32_t>(b.piece_bytes(p).data());
      out += type == perf_abi::kSample ? "S" : type == perf_abi::kMmap2 ? "M" : "?";
      out += std::to_string(p.stream);
    }
    return out;
  }

  pb::Attr battr_;
  FakeRingBuffer cpu0_, cpu1_;
  RingBuffer rb0_, rb1_;
};

TEST_F(RingBufferDrainTest, APassCopiesEveryBuffersRecordsAndGivesTheSpaceBack) {
  ASSERT_TRUE(cpu0_.write(sample(10)));
  ASSERT_TRUE(cpu0_.write(mmap(11)));
  ASSERT_TRUE(cpu1_.write(sample(12)));
  RingBufferDrain reader({&rb0_, &rb1_});
  RecordBatch batch;
  EXPECT_EQ(reader.read_pass(batch), cpu0_.head() + cpu1_.head());
  EXPECT_EQ(kinds(batch), "S0M0S1");
  EXPECT_EQ(cpu0_.tail(), cpu0_.head());
  EXPECT_EQ(cpu1_.tail(), cpu1_.head());
  EXPECT_EQ(batch.totals.passes, 1u);
  EXPECT_EQ(batch.totals.dropped.samples + batch.totals.dropped.records, 0u);
  // The copy is the record, byte for byte.
  const std::vector<uint8_t> first = sample(10);
  const auto copied = batch.piece_bytes(batch.pieces[0]);
  EXPECT_EQ(std::vector<uint8_t>(copied.begin(), copied.end()), first);
}

TEST_F(RingBufferDrainTest, PastTheBudgetSamplesAreLeftOutFirstThenEverythingCounted) {
  for (uint64_t t = 0; t < 10; ++t) {
    ASSERT_TRUE(cpu0_.write(sample(2 * t)));
    ASSERT_TRUE(cpu0_.write(mmap(2 * t + 1)));
  }
  RingBufferDrain reader({&rb0_});
  const size_t one = sample(0).size() + sizeof(RecordBatch::Piece);
  const size_t side = mmap(0).size() + sizeof(RecordBatch::Piece);
  // Room for three samples' worth: samples stop there, MMAP2 records go on into the reserve.
  RingBufferDrain::Budget budget;
  budget.samples = 3 * one;
  budget.records = 3 * one + 4 * side;
  RecordBatch batch;
  reader.read_pass(batch, budget);
  EXPECT_EQ(cpu0_.tail(), cpu0_.head()) << "the buffer is emptied whatever fits";
  const std::string got = kinds(batch);
  EXPECT_EQ(got.substr(0, 4), "S0M0");
  size_t samples = 0, mmaps = 0;
  for (size_t i = 0; i < got.size(); i += 2) (got[i] == 'S' ? samples : mmaps)++;
  EXPECT_LE(batch.memory_bytes(), budget.records);
  EXPECT_EQ(samples + batch.totals.dropped.samples, 10u);
  EXPECT_EQ(mmaps + batch.totals.dropped.records, 10u);
  EXPECT_GT(batch.totals.dropped.samples, 0u);
  EXPECT_GT(batch.totals.dropped.records, 0u);
  EXPECT_GT(mmaps, samples) << "side-band records have a reserve of their own";
  // The counts run on from pass to pass.
  ASSERT_TRUE(cpu0_.write(sample(100)));
  RecordBatch next;
  RingBufferDrain::Budget none;
  none.samples = 0;
  none.records = 0;
  reader.read_pass(next, none);
  EXPECT_TRUE(next.pieces.empty());
  EXPECT_EQ(next.totals.dropped.samples, batch.totals.dropped.samples + 1);
}

TEST_F(RingBufferDrainTest, ARetiredBufferIsReadNoMore) {
  ASSERT_TRUE(cpu1_.write(sample(1)));
  RingBufferDrain reader({&rb0_, &rb1_});
  reader.retire(1);
  RecordBatch batch;
  EXPECT_EQ(reader.read_pass(batch), 0u);
  EXPECT_TRUE(batch.pieces.empty());
  EXPECT_EQ(cpu1_.tail(), 0u);
  // A buffer added later (a CPU that came online) takes the next index.
  FakeRingBuffer cpu2(4096);
  RingBuffer rb2 = cpu2.reader();
  reader.add_buffer(&rb2);
  ASSERT_TRUE(cpu2.write(sample(2)));
  reader.read_pass(batch);
  EXPECT_EQ(kinds(batch), "S2");
}

struct Blob {
  std::vector<uint8_t> bytes;
  size_t memory_bytes() const { return bytes.size(); }
  size_t capacity_bytes() const { return bytes.capacity(); }
  void clear() { bytes.clear(); }
};

TEST(DrainBacklog, BytesAreHeldFromPublishUntilRecycledInOrder) {
  DrainBacklog<Blob> backlog(1000);
  EXPECT_EQ(backlog.room(0), 1000u);
  auto a = backlog.acquire();
  a->bytes.resize(300);
  backlog.publish(std::move(a));
  auto b = backlog.acquire();
  b->bytes.resize(500);
  EXPECT_EQ(backlog.room(b->memory_bytes()), 200u);
  backlog.publish(std::move(b));
  EXPECT_EQ(backlog.held_bytes(), 800u);
  EXPECT_EQ(backlog.room(300), 0u);
  auto first = backlog.take();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->bytes.size(), 300u);
  EXPECT_EQ(backlog.held_bytes(), 800u) << "taken, still being processed";
  backlog.recycle(std::move(first));
  EXPECT_EQ(backlog.held_bytes(), 500u);
  auto second = backlog.take();
  backlog.recycle(std::move(second));
  EXPECT_EQ(backlog.held_bytes(), 0u);
  EXPECT_EQ(backlog.peak_bytes(), 800u);
  EXPECT_FALSE(backlog.take());
  // A recycled batch comes back empty.
  EXPECT_TRUE(backlog.acquire()->bytes.empty());
}

}  // namespace
}  // namespace profcollect
