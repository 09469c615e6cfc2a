// RingBuffer against a control page that cannot be right: a data_head more than the data area
// ahead of the tail, or behind it, is counted and the reader starts again from it without
// reading a byte outside the area; a data area placed outside the mapping is refused.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "collector/live/ring_buffer.h"
#include "tests/unit/fake_ring_buffer.h"

namespace profcollect {
namespace {

using test::FakeRingBuffer;

std::vector<uint8_t> record_of(uint16_t size, uint8_t fill) {
  std::vector<uint8_t> r(size, fill);
  perf_event_header h{9, 0, size};
  std::memcpy(r.data(), &h, sizeof h);
  return r;
}

TEST(RingBufferCorruption, HeadMoreThanTheAreaAheadIsSkippedAndCounted) {
  FakeRingBuffer fake(256);
  RingBuffer rb = fake.reader();
  // A header claiming 64 KiB sits at the tail; then data_head jumps 1 TiB ahead.
  const auto big = record_of(8, 0);
  uint16_t huge = 0xfff8;
  std::memcpy(fake.data(), big.data(), 8);
  std::memcpy(fake.data() + 6, &huge, 2);
  fake.control()->data_head = uint64_t{1} << 40;
  EXPECT_EQ(rb.begin_pass(), 0u) << "nothing between tail and such a head can be read";
  std::span<const uint8_t> rec;
  EXPECT_FALSE(rb.next(rec));
  rb.end_pass();
  EXPECT_EQ(rb.corrupt_heads(), 1u);
  EXPECT_EQ(rb.bytes_read(), 0u);
  EXPECT_EQ(fake.tail(), uint64_t{1} << 40) << "the reader resynchronises on the head";

  // From there on the buffer reads normally again.
  fake.start_at(uint64_t{1} << 40);
  const auto next = record_of(32, 7);
  ASSERT_TRUE(fake.write(next));
  rb.begin_pass();
  ASSERT_TRUE(rb.next(rec));
  EXPECT_EQ(std::vector<uint8_t>(rec.begin(), rec.end()), next);
  rb.end_pass();
  EXPECT_EQ(rb.corrupt_heads(), 1u);
}

TEST(RingBufferCorruption, HeadBehindTheTailIsSkippedAndCounted) {
  FakeRingBuffer fake(256);
  fake.start_at(1000);
  RingBuffer rb = fake.reader();
  fake.control()->data_head = 999;
  EXPECT_EQ(rb.begin_pass(), 0u);
  std::span<const uint8_t> rec;
  EXPECT_FALSE(rb.next(rec));
  rb.end_pass();
  EXPECT_EQ(rb.corrupt_heads(), 1u);
  EXPECT_EQ(fake.tail(), 999u);
}

TEST(RingBufferCorruption, HeadExactlyOneAreaAheadIsStillRead) {
  FakeRingBuffer fake(64);
  RingBuffer rb = fake.reader();
  ASSERT_TRUE(fake.write(record_of(32, 1)));
  ASSERT_TRUE(fake.write(record_of(32, 2)));  // the area is full, not overrun
  EXPECT_EQ(rb.begin_pass(), 64u);
  std::span<const uint8_t> rec;
  EXPECT_TRUE(rb.next(rec));
  EXPECT_TRUE(rb.next(rec));
  rb.end_pass();
  EXPECT_EQ(rb.corrupt_heads(), 0u);
}

TEST(RingBufferCorruption, DataAreaOutsideTheMappingIsRefused) {
  FakeRingBuffer fake(1024);
  fake.control()->data_offset = FakeRingBuffer::kPage;
  fake.control()->data_size = 4096;  // the mapping holds 1024 bytes after the control page
  EXPECT_THROW(fake.reader(), std::invalid_argument);
  fake.control()->data_offset = 0;  // on top of the control page
  fake.control()->data_size = 1024;
  EXPECT_THROW(fake.reader(), std::invalid_argument);
  fake.control()->data_offset = FakeRingBuffer::kPage;
  EXPECT_NO_THROW(fake.reader());
}

}  // namespace
}  // namespace profcollect
