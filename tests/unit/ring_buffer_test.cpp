// RingBuffer: the reading side of the perf ring-buffer protocol, on a buffer in memory laid out
// like the kernel's mapping (fake_ring_buffer.h).
#include "collector/live/ring_buffer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/unit/fake_ring_buffer.h"

namespace profcollect {
namespace {

using test::FakeRingBuffer;

// A record of `size` bytes (a multiple of 8) whose body bytes are seq, seq+1, ...
std::vector<uint8_t> numbered_record(uint32_t type, uint16_t size, uint8_t seq) {
  std::vector<uint8_t> r(size);
  perf_event_header h{type, 0, size};
  std::memcpy(r.data(), &h, sizeof h);
  for (size_t i = sizeof h; i < size; ++i) r[i] = static_cast<uint8_t>(seq + i);
  return r;
}

std::vector<std::vector<uint8_t>> read_pass(RingBuffer& rb) {
  std::vector<std::vector<uint8_t>> out;
  rb.begin_pass();
  std::span<const uint8_t> rec;
  while (rb.next(rec)) out.emplace_back(rec.begin(), rec.end());
  rb.end_pass();
  return out;
}

TEST(RingBuffer, EmptyBufferYieldsNothing) {
  FakeRingBuffer fake(4096);
  RingBuffer rb = fake.reader();
  EXPECT_EQ(rb.begin_pass(), 0u);
  std::span<const uint8_t> rec;
  EXPECT_FALSE(rb.next(rec));
  rb.end_pass();
  EXPECT_EQ(fake.tail(), 0u);
}

TEST(RingBuffer, ReadsRecordsInOrderAndReleasesThemAtTheEndOfThePass) {
  FakeRingBuffer fake(4096);
  auto a = numbered_record(9, 32, 1), b = numbered_record(10, 64, 2), c = numbered_record(3, 24, 3);
  ASSERT_TRUE(fake.write(a));
  ASSERT_TRUE(fake.write(b));
  ASSERT_TRUE(fake.write(c));
  RingBuffer rb = fake.reader();
  EXPECT_EQ(rb.begin_pass(), 120u);
  std::span<const uint8_t> rec;
  ASSERT_TRUE(rb.next(rec));
  EXPECT_EQ(std::vector<uint8_t>(rec.begin(), rec.end()), a);
  // In place: an unwrapped record is not copied.
  EXPECT_EQ(rec.data(), fake.data());
  ASSERT_TRUE(rb.next(rec));
  EXPECT_EQ(std::vector<uint8_t>(rec.begin(), rec.end()), b);
  ASSERT_TRUE(rb.next(rec));
  EXPECT_EQ(std::vector<uint8_t>(rec.begin(), rec.end()), c);
  EXPECT_FALSE(rb.next(rec));
  // Nothing is given back to the kernel before end_pass().
  EXPECT_EQ(fake.tail(), 0u);
  rb.end_pass();
  EXPECT_EQ(fake.tail(), 120u);
  EXPECT_EQ(rb.bytes_read(), 120u);
}

TEST(RingBuffer, RecordWrappingAroundTheEndIsCopiedWhole) {
  FakeRingBuffer fake(256);
  fake.start_at(256 - 24);  // 24 bytes before the end: a 64-byte record wraps by 40
  auto wrapped = numbered_record(9, 64, 7);
  auto after = numbered_record(9, 32, 8);
  ASSERT_TRUE(fake.write(wrapped));
  ASSERT_TRUE(fake.write(after));
  RingBuffer rb = fake.reader();
  rb.begin_pass();
  std::span<const uint8_t> rec;
  ASSERT_TRUE(rb.next(rec));
  EXPECT_EQ(std::vector<uint8_t>(rec.begin(), rec.end()), wrapped);
  // Copied: the span lies outside the data area.
  EXPECT_TRUE(rec.data() < fake.data() || rec.data() >= fake.data() + 256);
  ASSERT_TRUE(rb.next(rec));
  EXPECT_EQ(std::vector<uint8_t>(rec.begin(), rec.end()), after);
  EXPECT_EQ(rec.data(), fake.data() + 40);
  rb.end_pass();
  EXPECT_EQ(fake.tail(), 256u - 24 + 96);
}

TEST(RingBuffer, WrapsManyTimesOverLongRuns) {
  FakeRingBuffer fake(512);
  RingBuffer rb = fake.reader();
  // Sizes that do not divide the buffer, so records land across the end at every offset.
  const uint16_t sizes[] = {40, 56, 24, 104, 8, 72};
  uint8_t seq = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<std::vector<uint8_t>> written;
    for (uint16_t s : sizes) {
      written.push_back(numbered_record(9, s, seq++));
      ASSERT_TRUE(fake.write(written.back())) << "round " << round;
    }
    ASSERT_EQ(read_pass(rb), written) << "round " << round;
  }
  EXPECT_GT(fake.head(), 512u * 100);
}

TEST(RingBuffer, PassReadsOnlyUpToTheHeadItSnapshotted) {
  FakeRingBuffer fake(4096);
  auto a = numbered_record(9, 32, 1), b = numbered_record(9, 32, 2);
  ASSERT_TRUE(fake.write(a));
  RingBuffer rb = fake.reader();
  EXPECT_EQ(rb.begin_pass(), 32u);
  ASSERT_TRUE(fake.write(b));  // the kernel writes on during the pass
  std::span<const uint8_t> rec;
  ASSERT_TRUE(rb.next(rec));
  EXPECT_FALSE(rb.next(rec));
  rb.end_pass();
  EXPECT_EQ(fake.tail(), 32u);
  EXPECT_EQ(read_pass(rb), std::vector<std::vector<uint8_t>>{b});
}

TEST(RingBuffer, UnpublishedBytesAreNotRead) {
  FakeRingBuffer fake(4096);
  ASSERT_TRUE(fake.write_unpublished(numbered_record(9, 48, 1)));
  RingBuffer rb = fake.reader();
  EXPECT_EQ(rb.begin_pass(), 0u);
  std::span<const uint8_t> rec;
  EXPECT_FALSE(rb.next(rec));
  rb.end_pass();
  fake.publish();
  EXPECT_EQ(read_pass(rb).size(), 1u);
}

TEST(RingBuffer, PartialPassReleasesOnlyWhatWasReturned) {
  FakeRingBuffer fake(4096);
  std::vector<std::vector<uint8_t>> all;
  for (uint8_t i = 0; i < 5; ++i) {
    all.push_back(numbered_record(9, 40, i));
    ASSERT_TRUE(fake.write(all.back()));
  }
  RingBuffer rb = fake.reader();
  rb.begin_pass();
  std::span<const uint8_t> rec;
  ASSERT_TRUE(rb.next(rec));
  ASSERT_TRUE(rb.next(rec));
  rb.end_pass();  // stop early: two records taken
  EXPECT_EQ(fake.tail(), 80u);
  auto rest = read_pass(rb);
  EXPECT_EQ(rest, std::vector<std::vector<uint8_t>>(all.begin() + 2, all.end()));
  EXPECT_EQ(fake.tail(), 200u);
}

TEST(RingBuffer, FullBufferRefusesTheWriterUntilTheTailMoves) {
  FakeRingBuffer fake(256);
  RingBuffer rb = fake.reader();
  for (uint8_t i = 0; i < 4; ++i) ASSERT_TRUE(fake.write(numbered_record(9, 64, i)));
  EXPECT_FALSE(fake.write(numbered_record(9, 64, 9)));  // full: the kernel would lose it
  rb.begin_pass();
  std::span<const uint8_t> rec;
  ASSERT_TRUE(rb.next(rec));
  EXPECT_FALSE(fake.write(numbered_record(9, 64, 9)));  // read but not yet released
  rb.end_pass();
  EXPECT_TRUE(fake.write(numbered_record(9, 64, 9)));
}

TEST(RingBuffer, CorruptHeaderSkipsTheRestOfThePass) {
  FakeRingBuffer fake(4096);
  ASSERT_TRUE(fake.write(numbered_record(9, 32, 1)));
  std::vector<uint8_t> bad(16, 0);  // size 0: not a record
  ASSERT_TRUE(fake.write(bad));
  RingBuffer rb = fake.reader();
  auto got = read_pass(rb);
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(rb.skipped_bytes(), 16u);
  EXPECT_EQ(fake.tail(), 48u);
  // A size beyond the head is as bad: nothing reads past data_head.
  auto too_long = numbered_record(9, 64, 2);
  too_long.resize(32);
  ASSERT_TRUE(fake.write(too_long));
  EXPECT_TRUE(read_pass(rb).empty());
  EXPECT_EQ(rb.skipped_bytes(), 48u);
  ASSERT_TRUE(fake.write(numbered_record(9, 32, 3)));
  EXPECT_EQ(read_pass(rb).size(), 1u);
}

TEST(RingBuffer, DataAreaFromTheControlPageOrAfterTheFirstPage) {
  FakeRingBuffer modern(1024, /*fill_data_fields=*/true);
  FakeRingBuffer old(1024, /*fill_data_fields=*/false);
  for (FakeRingBuffer* f : {&modern, &old}) {
    auto r = numbered_record(9, 48, 5);
    ASSERT_TRUE(f->write(r));
    RingBuffer rb = f->reader();
    EXPECT_EQ(rb.data_size(), 1024u);
    EXPECT_EQ(read_pass(rb), std::vector<std::vector<uint8_t>>{r});
  }
}

TEST(RingBuffer, ResumesFromTheTailAPreviousReaderLeft) {
  FakeRingBuffer fake(1024);
  ASSERT_TRUE(fake.write(numbered_record(9, 32, 1)));
  {
    RingBuffer first = fake.reader();
    EXPECT_EQ(read_pass(first).size(), 1u);
  }
  auto second_record = numbered_record(9, 32, 2);
  ASSERT_TRUE(fake.write(second_record));
  RingBuffer second = fake.reader();
  EXPECT_EQ(read_pass(second), std::vector<std::vector<uint8_t>>{second_record});
}

// A writer thread and the reader race as the kernel and profcollect do: every record must
// arrive whole and in order, the writer waiting whenever the small buffer is full.
TEST(RingBuffer, ConcurrentWriterAndReaderAgreeOnEveryRecord) {
  FakeRingBuffer fake(1024);
  constexpr uint32_t kRecords = 40000;
  std::atomic<bool> writer_done{false};
  std::thread writer([&] {
    for (uint32_t i = 0; i < kRecords; ++i) {
      const uint16_t size = static_cast<uint16_t>(16 + 8 * (i % 7));
      std::vector<uint8_t> r(size);
      perf_event_header h{9, 0, size};
      std::memcpy(r.data(), &h, sizeof h);
      for (size_t k = 8; k + 4 <= size; k += 4) std::memcpy(r.data() + k, &i, 4);
      while (!fake.write(r)) std::this_thread::yield();
    }
    writer_done = true;
  });
  RingBuffer rb = fake.reader();
  uint32_t expected = 0;
  bool intact = true;
  for (;;) {
    // Read `done` first: if it was set, everything written is below the head we snapshot.
    const bool done = writer_done.load();
    const uint64_t available = rb.begin_pass();
    std::span<const uint8_t> rec;
    while (rb.next(rec)) {
      if (rec.size() != 16 + 8 * (expected % 7)) intact = false;
      for (size_t k = 8; k + 4 <= rec.size(); k += 4) {
        uint32_t v;
        std::memcpy(&v, rec.data() + k, 4);
        if (v != expected) intact = false;
      }
      ++expected;
    }
    rb.end_pass();
    if (done && available == 0) break;
  }
  writer.join();
  EXPECT_TRUE(intact) << "record " << expected << " was damaged";
  EXPECT_EQ(expected, kRecords);
  EXPECT_EQ(rb.skipped_bytes(), 0u);
}

}  // namespace
}  // namespace profcollect
