// AuxBuffer: the reading side of an AUX area (aux_head / aux_tail in the control page, the same
// protocol as the data area's), on an area in memory laid out like the kernel's and written as
// the kernel writes it (fake_ring_buffer.h's FakeAuxArea). No AUX-capable PMU is needed.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "collector/live/ring_buffer.h"
#include "tests/unit/fake_ring_buffer.h"

namespace profcollect {
namespace {

using test::FakeAuxArea;

// The byte at stream position `pos`: every position has its own value (mod 251, a prime, so a
// piece read from the wrong place of a power-of-two area differs).
uint8_t byte_at(uint64_t pos) { return static_cast<uint8_t>((pos * 31 + 7) % 251); }

std::vector<uint8_t> stream_bytes(uint64_t from, size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = byte_at(from + i);
  return v;
}

std::vector<uint8_t> joined(const AuxBuffer::Bytes& b) {
  std::vector<uint8_t> v(b.first.begin(), b.first.end());
  v.insert(v.end(), b.second.begin(), b.second.end());
  return v;
}

TEST(AuxBuffer, EmptyAreaGivesNothing) {
  FakeAuxArea fake(4096);
  AuxBuffer aux = fake.reader();
  const AuxBuffer::Bytes b = aux.begin_pass();
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.offset, 0u);
  aux.end_pass();
  EXPECT_EQ(fake.tail(), 0u);
}

TEST(AuxBuffer, NewBytesInPlaceAndGivenBackOnlyAtTheEndOfThePass) {
  FakeAuxArea fake(4096);
  ASSERT_TRUE(fake.write(stream_bytes(0, 100)));
  ASSERT_TRUE(fake.write(stream_bytes(100, 60)));
  AuxBuffer aux = fake.reader();
  const AuxBuffer::Bytes b = aux.begin_pass();
  EXPECT_EQ(b.offset, 0u);
  ASSERT_EQ(b.size(), 160u);
  EXPECT_TRUE(b.second.empty());
  EXPECT_EQ(b.first.data(), fake.area()) << "bytes that do not wrap are not copied";
  EXPECT_EQ(joined(b), stream_bytes(0, 160));
  EXPECT_EQ(fake.tail(), 0u) << "aux_tail moves only at end_pass()";
  aux.end_pass();
  EXPECT_EQ(fake.tail(), 160u);
  EXPECT_EQ(aux.bytes_read(), 160u);

  ASSERT_TRUE(fake.write(stream_bytes(160, 40)));
  const AuxBuffer::Bytes next = aux.begin_pass();
  EXPECT_EQ(next.offset, 160u);
  EXPECT_EQ(joined(next), stream_bytes(160, 40));
  aux.end_pass();
  EXPECT_EQ(fake.tail(), 200u);
}

TEST(AuxBuffer, BytesWrappingAroundTheEndComeInTwoPieces) {
  FakeAuxArea fake(4096);
  fake.start_at(3 * 4096 - 24);  // a long run: 24 bytes before the end of the area
  ASSERT_TRUE(fake.write(stream_bytes(3 * 4096 - 24, 64)));
  AuxBuffer aux = fake.reader();
  const AuxBuffer::Bytes b = aux.begin_pass();
  EXPECT_EQ(b.offset, 3u * 4096 - 24);
  ASSERT_EQ(b.first.size(), 24u);
  ASSERT_EQ(b.second.size(), 40u);
  EXPECT_EQ(b.first.data(), fake.area() + 4096 - 24);
  EXPECT_EQ(b.second.data(), fake.area());
  EXPECT_EQ(joined(b), stream_bytes(3 * 4096 - 24, 64));
  aux.end_pass();
  EXPECT_EQ(fake.tail(), 3u * 4096 + 40);
}

TEST(AuxBuffer, FullAreaWaitsForTheTail) {
  FakeAuxArea fake(1024);
  ASSERT_TRUE(fake.write(stream_bytes(0, 1000)));
  EXPECT_FALSE(fake.write(stream_bytes(1000, 100))) << "the kernel would truncate";
  AuxBuffer aux = fake.reader();
  EXPECT_EQ(aux.begin_pass().size(), 1000u);
  EXPECT_FALSE(fake.write(stream_bytes(1000, 100))) << "nothing given back before end_pass()";
  aux.end_pass();
  ASSERT_TRUE(fake.write(stream_bytes(1000, 100)));
  const AuxBuffer::Bytes b = aux.begin_pass();
  EXPECT_EQ(joined(b), stream_bytes(1000, 100));
  EXPECT_EQ(b.first.size(), 24u);  // 1000..1023, then 0..75 of the area
}

TEST(AuxBuffer, RangeOfAPerfRecordAuxWithinThePass) {
  FakeAuxArea fake(1024);
  fake.start_at(900);
  // Two PERF_RECORD_AUX would say: (900, 100) and (1000, 80).
  ASSERT_TRUE(fake.write(stream_bytes(900, 100)));
  ASSERT_TRUE(fake.write(stream_bytes(1000, 80)));
  AuxBuffer aux = fake.reader();
  aux.begin_pass();
  EXPECT_EQ(joined(aux.range(900, 100)), stream_bytes(900, 100));
  const AuxBuffer::Bytes second = aux.range(1000, 80);
  EXPECT_EQ(second.first.size(), 24u);
  EXPECT_EQ(joined(second), stream_bytes(1000, 80));
  // Outside the pass: before the tail, past the head.
  EXPECT_EQ(aux.range(899, 10).size(), 0u);
  EXPECT_EQ(aux.range(1000, 81).size(), 0u);
  EXPECT_EQ(aux.range(1081, 1).size(), 0u);
  EXPECT_EQ(aux.range(1080, 0).size(), 0u);
  EXPECT_EQ(aux.range(UINT64_MAX - 3, 8).size(), 0u);
}

TEST(AuxBuffer, ImpossibleHeadIsCountedAndSkipped) {
  FakeAuxArea fake(1024);
  AuxBuffer aux = fake.reader();
  // More than the area ahead of the tail: the control page cannot be right.
  fake.control()->aux_head = 5000;
  EXPECT_EQ(aux.begin_pass().size(), 0u);
  EXPECT_EQ(aux.corrupt_heads(), 1u);
  aux.end_pass();
  EXPECT_EQ(fake.tail(), 5000u);
  // And behind it.
  fake.control()->aux_head = 4000;
  EXPECT_EQ(aux.begin_pass().size(), 0u);
  EXPECT_EQ(aux.corrupt_heads(), 2u);
}

TEST(AuxBuffer, SizeMustBeAPowerOfTwo) {
  FakeAuxArea fake(1024);
  EXPECT_THROW(AuxBuffer(fake.control(), fake.area(), 1000), std::invalid_argument);
  EXPECT_THROW(AuxBuffer(fake.control(), fake.area(), 0), std::invalid_argument);
}

// A writer thread and the reader race as the PMU's driver and profcollect do: every byte must
// arrive at its stream position, the writer waiting whenever the small area is full.
TEST(AuxBuffer, ConcurrentWriterAndReaderAgreeOnEveryByte) {
  FakeAuxArea fake(1024);
  constexpr uint64_t kTotal = 1 << 21;
  std::atomic<bool> writer_done{false};
  std::thread writer([&] {
    uint64_t pos = 0;
    for (uint32_t i = 0; pos < kTotal; ++i) {
      const size_t n = std::min<uint64_t>(1 + (i * 37) % 300, kTotal - pos);
      const std::vector<uint8_t> chunk = stream_bytes(pos, n);
      while (!fake.write(chunk)) std::this_thread::yield();
      pos += n;
    }
    writer_done = true;
  });
  AuxBuffer aux = fake.reader();
  uint64_t expected_pos = 0;
  bool intact = true;
  for (;;) {
    // Read `done` first: if it was set, everything written is below the head we snapshot.
    const bool done = writer_done.load();
    const AuxBuffer::Bytes b = aux.begin_pass();
    if (b.offset != expected_pos) intact = false;
    for (std::span<const uint8_t> piece : {b.first, b.second})
      for (uint8_t v : piece) intact &= v == byte_at(expected_pos++);
    aux.end_pass();
    if (done && b.size() == 0) break;
  }
  writer.join();
  EXPECT_TRUE(intact) << "a byte before stream position " << expected_pos << " was wrong";
  EXPECT_EQ(expected_pos, kTotal);
  EXPECT_EQ(aux.corrupt_heads(), 0u);
}

}  // namespace
}  // namespace profcollect
