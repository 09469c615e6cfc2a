// TimeOrderer: perf's round rule (at FINISHED_ROUND, let out what is not later than the
// previous round's largest time), records without a time keeping their place, ties in input
// order, bounded memory, and the half release when rounds never come.
#include "collector/records/time_orderer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>

#include "record/record.h"

namespace profcollect {
namespace {

// A fake record whose body is its tag, so the output order can be read back.
struct Fake {
  std::vector<uint8_t> bytes;
  explicit Fake(uint64_t tag, size_t size = 16) : bytes(size, 0) {
    uint16_t s = static_cast<uint16_t>(size);
    uint32_t type = 9;
    std::memcpy(bytes.data(), &type, 4);
    std::memcpy(bytes.data() + 6, &s, 2);
    std::memcpy(bytes.data() + 8, &tag, 8);
  }
  RawRecord raw() const {
    RawRecord r;
    r.type = 9;
    r.bytes = {bytes.data(), bytes.size()};
    return r;
  }
};

uint64_t tag_of(const RawRecord& r) {
  uint64_t tag;
  std::memcpy(&tag, r.bytes.data() + 8, 8);
  return tag;
}

std::vector<uint64_t> drain(TimeOrderer& o) {
  std::vector<uint64_t> tags;
  RawRecord r;
  while (o.pop(r)) tags.push_back(tag_of(r));
  return tags;
}

void push(TimeOrderer& o, uint64_t tag, uint64_t time) { o.push(Fake(tag).raw(), time); }

TEST(TimeOrdererTest, FinishedRoundLetsOutUpToThePreviousRoundsMaximum) {
  TimeOrderer o;
  push(o, 5, 5);
  push(o, 1, 1);
  push(o, 3, 3);
  o.finish_round();  // the first round: nothing is safe yet (a CPU may still be behind)
  EXPECT_TRUE(drain(o).empty());
  push(o, 4, 4);
  push(o, 8, 8);
  push(o, 2, 2);
  o.finish_round();  // up to 5, the first round's maximum
  EXPECT_EQ(drain(o), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  push(o, 7, 7);
  push(o, 6, 6);
  o.finish_round();  // up to 8
  EXPECT_EQ(drain(o), (std::vector<uint64_t>{6, 7, 8}));
  push(o, 9, 9);
  o.finish_all();
  EXPECT_EQ(drain(o), (std::vector<uint64_t>{9}));
  EXPECT_EQ(o.queued(), 0u);
}

TEST(TimeOrdererTest, RecordsWithoutTimeKeepTheirPlace) {
  TimeOrderer o;
  push(o, 100, 0);  // synthesized before anything: first
  push(o, 10, 10);
  push(o, 101, kNoTime);  // after the time-10 record read before it
  push(o, 5, 5);          // an earlier time from another CPU goes before both
  push(o, 102, 0);
  push(o, 12, 12);
  o.finish_all();
  EXPECT_EQ(drain(o), (std::vector<uint64_t>{100, 5, 10, 101, 102, 12}));
}

TEST(TimeOrdererTest, EqualTimesKeepInputOrder) {
  TimeOrderer o;
  for (uint64_t tag = 0; tag < 50; ++tag) push(o, tag, 7);
  o.finish_all();
  std::vector<uint64_t> expected(50);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(drain(o), expected);
}

TEST(TimeOrdererTest, PoppedBytesStayValidUntilTheNextCall) {
  TimeOrderer o;
  push(o, 1, 1);
  push(o, 2, 2);
  o.finish_all();
  RawRecord a, b;
  ASSERT_TRUE(o.pop(a));
  EXPECT_EQ(tag_of(a), 1u);
  EXPECT_EQ(a.bytes.size(), 16u);
  ASSERT_TRUE(o.pop(b));
  EXPECT_EQ(tag_of(b), 2u);
}

// Many rounds of interleaved CPUs: output is sorted, and memory stays at about two rounds.
TEST(TimeOrdererTest, ManyRoundsStaySortedInBoundedMemory) {
  TimeOrderer o;
  std::mt19937_64 rng(1);
  const size_t per_round = 200, record_size = 64;
  uint64_t base = 1000, tag = 0;
  size_t max_buffered = 0;
  std::vector<uint64_t> times;
  uint64_t last = 0;
  size_t out = 0;
  for (int round = 0; round < 300; ++round) {
    // Two CPUs' buffers of one round, each sorted, together overlapping the last round a bit.
    for (int cpu = 0; cpu < 2; ++cpu)
      for (size_t i = 0; i < per_round / 2; ++i) {
        uint64_t t = base + i * 10 + rng() % 5 - (cpu ? 20 : 0);
        o.push(Fake(t, record_size).raw(), t);
        ++tag;
      }
    base += per_round / 2 * 10;
    o.finish_round();
    max_buffered = std::max(max_buffered, o.buffered_bytes());
    RawRecord r;
    while (o.pop(r)) {
      uint64_t t = tag_of(r);
      EXPECT_GE(t, last);
      last = t;
      ++out;
    }
  }
  o.finish_all();
  out += drain(o).size();
  EXPECT_EQ(out, tag);
  EXPECT_LE(max_buffered, 3 * per_round * record_size);
}

TEST(TimeOrdererTest, WithoutRoundsTheOlderHalfGoesOutWhenFull) {
  TimeOrderer o(/*max_buffered_bytes=*/16 * 100);
  for (uint64_t t = 1; t <= 100; ++t) push(o, t, t);  // exactly at the limit
  EXPECT_EQ(drain(o).size(), 0u);
  push(o, 101, 101);  // past it: half goes out, oldest first
  std::vector<uint64_t> first = drain(o);
  ASSERT_EQ(first.size(), 50u);
  EXPECT_EQ(first.front(), 1u);
  EXPECT_EQ(first.back(), 50u);
  o.finish_all();
  std::vector<uint64_t> rest = drain(o);
  ASSERT_EQ(rest.size(), 51u);
  EXPECT_EQ(rest.front(), 51u);
  EXPECT_EQ(rest.back(), 101u);
}

}  // namespace
}  // namespace profcollect
