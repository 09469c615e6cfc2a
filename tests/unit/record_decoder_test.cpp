// RecordDecoder on synthetic records: every sample_type field (alone and all together) is
// stepped over exactly (a record one word short must fail), branch stacks with and without
// hw_idx and counters, read formats, sample_id_all trailers, attr lookup by id, and records
// whose counts would run past their end. Every record decoded here also has its time peeked
// (RecordDecoder::peek_time), which must agree with the decoded one.
#include "collector/records/record_decoder.h"

#include <gtest/gtest.h>

#include <deque>

#include "collector/records/byte_cursor.h"
#include "tests/unit/perf_record_builder.h"

namespace profcollect {
namespace {

using namespace perfbuild;

RawRecord raw_of(const std::vector<uint8_t>& bytes) {
  RawRecord r;
  r.type = perf_abi::load<uint32_t>(bytes.data());
  r.misc = perf_abi::load<uint16_t>(bytes.data() + 4);
  r.bytes = {bytes.data(), bytes.size()};
  return r;
}

// The same record with its last `n` bytes cut off (and its header size saying so).
std::vector<uint8_t> shortened(std::vector<uint8_t> rec, size_t n) {
  rec.resize(rec.size() - n);
  uint16_t size = static_cast<uint16_t>(rec.size());
  std::memcpy(rec.data() + 6, &size, 2);
  return rec;
}

struct Session {
  explicit Session(const std::vector<std::pair<Attr, std::vector<uint64_t>>>& attrs) {
    for (const auto& [a, ids] : attrs) state.add_attr(parse_perf_attr(a.bytes()), ids);
  }
  // A decoded record's strings and branch stacks point into its bytes: the session keeps a copy
  // of every record it decoded, so that callers may pass temporaries.
  Record decode(const std::vector<uint8_t>& bytes) {
    kept.push_back(bytes);
    Record out;
    const RawRecord raw = raw_of(kept.back());
    decoder.decode(raw, out);
    // Time ordering reads the time without decoding: it must be the decoded one, for every
    // layout this file tries.
    EXPECT_EQ(decoder.peek_time(raw), RecordDecoder::time_of(out));
    return out;
  }
  PerfSessionState state;
  RecordDecoder decoder{state};
  std::deque<std::vector<uint8_t>> kept;
};

// A sample with a distinct value in every field.
Sample full_sample() {
  Sample s;
  s.identifier = 0x1d;
  s.ip = 0x401000;
  s.pid = 100;
  s.tid = 101;
  s.time = 123456789;
  s.addr = 0xdead0000;
  s.id = 0x1d;
  s.stream_id = 77;
  s.cpu = 3;
  s.period = 4242;
  s.read_values = {10, 20, 30, 0x1d};  // value, enabled, running, id
  s.callchain = {0xfffffffffffffe00, 0x401000, 0x401100};
  s.raw = {1, 2, 3, 4, 5};
  s.branches = {{0x10, 0x20, 0x2 | (7 << 4)}, {0x30, 0x40, 0x1}, {0x50, 0x60, 0}};
  s.regs_user_abi = 2;
  s.regs_user = {1, 2, 3};
  s.stack_user = std::vector<uint8_t>(16, 0xab);
  s.stack_dyn_size = 16;
  s.weight = 9;
  s.data_src = 8;
  s.transaction = 7;
  s.regs_intr_abi = 2;
  s.regs_intr = {4, 5};
  s.phys_addr = 0x1000;
  s.cgroup = 5;
  s.data_page_size = 4096;
  s.code_page_size = 4096;
  s.aux = std::vector<uint8_t>(24, 0xcd);
  return s;
}

Attr attr_for(uint64_t sample_type) {
  Attr a;
  a.sample_type = sample_type;
  a.read_format = FMT_ENABLED | FMT_RUNNING | FMT_ID;
  a.sample_regs_user = 0b1011;  // 3 registers
  a.sample_regs_intr = 0b0110;  // 2 registers
  return a;
}

class SampleTypeTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(SampleTypeTest, DecodesKeptFieldsAndStepsOverTheRestExactly) {
  const Attr a = attr_for(GetParam());
  const uint64_t st = a.sample_type;
  Session session({{a, {0x1d}}});
  const Sample s = full_sample();
  const std::vector<uint8_t> rec = sample(s, a, /*misc=*/2 | (1 << 14));

  Record r = session.decode(rec);
  ASSERT_TRUE(std::holds_alternative<SampleRecord>(r));
  const auto& d = std::get<SampleRecord>(r);
  EXPECT_EQ(d.ip, st & IP ? s.ip : 0);
  EXPECT_EQ(d.pid, st & TID ? s.pid : kNoPid);
  EXPECT_EQ(d.tid, st & TID ? s.tid : kNoPid);
  EXPECT_EQ(d.time, st & TIME ? s.time : kNoTime);
  EXPECT_EQ(d.addr, st & ADDR ? s.addr : 0);
  EXPECT_EQ(d.id, st & (ID | IDENTIFIER) ? s.id : 0);
  EXPECT_EQ(d.cpu, st & CPU ? s.cpu : UINT32_MAX);
  EXPECT_EQ(d.period, st & PERIOD ? s.period : 1);
  EXPECT_EQ(d.cpumode, CpuMode::User);
  EXPECT_TRUE(d.exact_ip);
  EXPECT_EQ(d.has_branch_stack, bool(st & BRANCH_STACK));
  if (st & BRANCH_STACK) {
    ASSERT_EQ(d.branches.size(), 3u);
    EXPECT_EQ(d.branches[0].from, 0x10u);
    EXPECT_EQ(d.branches[0].to, 0x20u);
    EXPECT_TRUE(d.branches[0].predicted());
    EXPECT_EQ(d.branches[0].cycles(), 7);
    EXPECT_TRUE(d.branches[1].mispredicted());
    EXPECT_EQ(d.branches[2].to, 0x60u);
  } else {
    EXPECT_TRUE(d.branches.empty());
  }
  // One word short must overrun the last field: the decoder consumed exactly the record.
  if (rec.size() > 8) {
    EXPECT_THROW(session.decode(shortened(rec, 8)), RecordFormatError);
  }
}

std::vector<uint64_t> sample_type_cases() {
  const uint64_t base = IP | TID | TIME;
  std::vector<uint64_t> cases = {IP, base, 0};
  for (uint64_t bit :
       {ADDR,         READ,         CALLCHAIN, ID,         CPU,    PERIOD,         STREAM_ID,
        RAW,          BRANCH_STACK, REGS_USER, STACK_USER, WEIGHT, DATA_SRC,       IDENTIFIER,
        TRANSACTION,  REGS_INTR,    PHYS_ADDR, AUX,        CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE,
        WEIGHT_STRUCT})
    cases.push_back(base | bit);
  uint64_t all = (1ULL << 24) - 1;  // every field up to CODE_PAGE_SIZE
  cases.push_back(all);
  cases.push_back((all & ~WEIGHT) | WEIGHT_STRUCT);
  cases.push_back(all & ~(IP | TID | TIME));  // the fields after them without them
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryField, SampleTypeTest, ::testing::ValuesIn(sample_type_cases()));

TEST(RecordDecoderTest, BranchStackWithHwIndexAndCounters) {
  for (uint64_t bst :
       {uint64_t{0}, kBranchHwIndex, kBranchCounters, kBranchHwIndex | kBranchCounters}) {
    Attr a;
    a.sample_type = IP | TID | TIME | BRANCH_STACK | PERIOD;
    a.branch_sample_type = bst | 1 /* ANY */;
    Session session({{a, {}}});
    Sample s;
    s.ip = 1;
    s.period = 5;
    s.hw_idx = 0x55;
    s.branches = {{1, 2, 0}, {3, 4, 0}};
    s.branch_counters = {9, 9};
    const auto rec = sample(s, a);
    const auto d = std::get<SampleRecord>(session.decode(rec));
    EXPECT_EQ(d.has_hw_idx, bool(bst & kBranchHwIndex)) << bst;
    EXPECT_EQ(d.hw_idx, bst & kBranchHwIndex ? 0x55u : 0u);
    ASSERT_EQ(d.branches.size(), 2u);
    EXPECT_EQ(d.branches[1].from, 3u);
    EXPECT_EQ(d.period, 5u);  // PERIOD precedes the stack; checked for the layout after it:
    EXPECT_THROW(session.decode(shortened(rec, 8)), RecordFormatError) << bst;
  }
}

TEST(RecordDecoderTest, EmptyBranchStack) {
  Attr a;
  a.sample_type = IP | BRANCH_STACK;
  Session session({{a, {}}});
  Sample s;
  const auto d = std::get<SampleRecord>(session.decode(sample(s, a)));
  EXPECT_TRUE(d.has_branch_stack);
  EXPECT_TRUE(d.branches.empty());
}

TEST(RecordDecoderTest, MisalignedBranchStackIsCopied) {
  Attr a;
  a.sample_type = IP | BRANCH_STACK;
  Session session({{a, {}}});
  Sample s;
  s.branches = {{0x111, 0x222, 2}, {0x333, 0x444, 1}};
  const auto rec = sample(s, a);
  std::vector<uint8_t> buffer(rec.size() + 1);
  std::memcpy(buffer.data() + 1, rec.data(), rec.size());  // one byte off alignment
  RawRecord raw = raw_of(rec);
  raw.bytes = {buffer.data() + 1, rec.size()};
  Record out;
  session.decoder.decode(raw, out);
  const auto& d = std::get<SampleRecord>(out);
  ASSERT_EQ(d.branches.size(), 2u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d.branches.data()) % alignof(BranchEntry), 0u);
  EXPECT_EQ(d.branches[0].from, 0x111u);
  EXPECT_EQ(d.branches[1].to, 0x444u);
}

TEST(RecordDecoderTest, ReadFormats) {
  struct Case {
    uint64_t format;
    std::vector<uint64_t> words;
  };
  const std::vector<Case> cases = {
      {0, {1}},
      {FMT_ENABLED, {1, 2}},
      {FMT_ENABLED | FMT_RUNNING | FMT_ID | FMT_LOST, {1, 2, 3, 4, 5}},
      {FMT_GROUP, {2, 10, 11}},                                    // nr, value x2
      {FMT_GROUP | FMT_ID, {2, 10, 1, 11, 2}},                     // nr, {value,id} x2
      {FMT_GROUP | FMT_ENABLED | FMT_RUNNING | FMT_ID | FMT_LOST,  // nr, times, {v,id,lost} x2
       {2, 100, 90, 10, 1, 0, 11, 2, 0}},
  };
  for (const Case& c : cases) {
    Attr a;
    a.sample_type = IP | READ | PERIOD;
    a.read_format = c.format;
    Session session({{a, {}}});
    Sample s;
    s.ip = 0x42;
    s.period = 3;
    s.read_values = c.words;
    // A field after READ (CALLCHAIN) proves READ was stepped over by the right amount.
    Attr with_chain = a;
    with_chain.sample_type |= CALLCHAIN;
    Session chained({{with_chain, {}}});
    s.callchain = {7};
    const auto rec = sample(s, with_chain);
    const auto d = std::get<SampleRecord>(chained.decode(rec));
    EXPECT_EQ(d.ip, 0x42u);
    EXPECT_EQ(d.period, 3u);
    EXPECT_THROW(chained.decode(shortened(rec, 8)), RecordFormatError) << c.format;
  }
}

TEST(RecordDecoderTest, RegsWithoutAbiAndEmptyUserStackHaveNoMoreWords) {
  Attr a;
  a.sample_type = IP | REGS_USER | STACK_USER | REGS_INTR | PHYS_ADDR;
  a.sample_regs_user = 0xff;
  a.sample_regs_intr = 0xff;
  Session session({{a, {}}});
  Sample s;
  s.regs_user_abi = 0;  // PERF_SAMPLE_REGS_ABI_NONE: no registers follow
  s.regs_intr_abi = 0;
  s.phys_addr = 1;  // stack size 0: no data and no dyn_size
  const auto rec = sample(s, a);
  EXPECT_EQ(rec.size(), 8u + 8 * 5);
  EXPECT_NO_THROW(session.decode(rec));
  EXPECT_THROW(session.decode(shortened(rec, 8)), RecordFormatError);
}

// Every field of the sample_id_all trailer in use, and the identifier to find the attr.
Attr trailer_attr() {
  Attr a;
  a.sample_type = IDENTIFIER | IP | TID | TIME | ID | STREAM_ID | CPU | PERIOD;
  return a;
}
const SampleId kTrailer{.pid = 7, .tid = 8, .cpu = 1, .time = 5555, .id = 0x99, .stream_id = 3};

TEST(RecordDecoderTest, SampleIdAllTrailersOnEveryNonSampleRecord) {
  const Attr a = trailer_attr();
  Session session({{a, {0x99}}});

  auto m = std::get<MmapRecord>(
      session.decode(mmap(42, 0x1000, 0x2000, 0x3000, "/bin/true", kTrailer, a)));
  EXPECT_EQ(m.time, 5555u);
  EXPECT_EQ(m.pid, 42u);
  EXPECT_EQ(m.start, 0x1000u);
  EXPECT_EQ(m.len, 0x2000u);
  EXPECT_EQ(m.pgoff, 0x3000u);
  EXPECT_EQ(m.filename, "/bin/true");
  EXPECT_FALSE(m.is_mmap2);
  EXPECT_TRUE(m.executable);

  auto data_map =
      std::get<MmapRecord>(session.decode(mmap(42, 0, 1, 0, "/data", kTrailer, a, 2 | (1 << 13))));
  EXPECT_FALSE(data_map.executable);

  Mmap2 spec{.pid = 5,
             .tid = 6,
             .start = 0x400000,
             .len = 0x1000,
             .pgoff = 0x2000,
             .maj = 8,
             .min = 3,
             .ino = 1234,
             .ino_generation = 99,
             .build_id = {},
             .prot = 5,
             .flags = 2,
             .file = "/usr/lib/libc.so.6"};
  auto m2 = std::get<MmapRecord>(session.decode(mmap2(spec, kTrailer, a)));
  EXPECT_TRUE(m2.is_mmap2);
  EXPECT_EQ(m2.time, 5555u);
  EXPECT_EQ(m2.maj, 8u);
  EXPECT_EQ(m2.min, 3u);
  EXPECT_EQ(m2.ino, 1234u);
  EXPECT_EQ(m2.ino_generation, 99u);
  EXPECT_EQ(m2.prot, 5u);
  EXPECT_EQ(m2.flags, 2u);
  EXPECT_EQ(m2.filename, "/usr/lib/libc.so.6");
  EXPECT_TRUE(m2.build_id.empty());

  spec.build_id = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  auto m3 = std::get<MmapRecord>(session.decode(mmap2(spec, kTrailer, a)));
  EXPECT_EQ(m3.build_id.to_hex(), "0102030405060708090a0b0c0d0e0f1011121314");
  EXPECT_EQ(m3.ino, 0u);
  EXPECT_EQ(m3.filename, "/usr/lib/libc.so.6");

  auto c = std::get<CommRecord>(session.decode(comm(5, 6, "worker", true, kTrailer, a)));
  EXPECT_EQ(c.comm, "worker");
  EXPECT_TRUE(c.exec);
  EXPECT_EQ(c.time, 5555u);

  auto f = std::get<TaskRecord>(session.decode(task(false, 10, 9, 11, 9, 1, kTrailer, a)));
  EXPECT_FALSE(f.is_exit);
  EXPECT_EQ(f.pid, 10u);
  EXPECT_EQ(f.ppid, 9u);
  EXPECT_EQ(f.tid, 11u);
  EXPECT_EQ(f.ptid, 9u);
  EXPECT_EQ(f.time, 5555u);  // the trailer's time wins over the body's
  EXPECT_TRUE(std::get<TaskRecord>(session.decode(task(true, 1, 1, 1, 1, 1, kTrailer, a))).is_exit);

  auto l = std::get<LostRecord>(session.decode(lost(0x99, 17, kTrailer, a)));
  EXPECT_FALSE(l.is_lost_samples);
  EXPECT_EQ(l.lost, 17u);
  EXPECT_EQ(l.id, 0x99u);
  auto ls = std::get<LostRecord>(session.decode(lost_samples(4, kTrailer, a)));
  EXPECT_TRUE(ls.is_lost_samples);
  EXPECT_EQ(ls.lost, 4u);
  EXPECT_EQ(ls.id, 0x99u);
  EXPECT_EQ(ls.time, 5555u);

  auto t = std::get<ThrottleRecord>(session.decode(throttle(true, 1, 0x99, kTrailer, a)));
  EXPECT_TRUE(t.unthrottle);
  EXPECT_EQ(t.id, 0x99u);
  EXPECT_EQ(t.time, 5555u);

  auto o = std::get<OtherRecord>(session.decode(context_switch(kTrailer, a)));
  EXPECT_EQ(o.type, 14u);
  EXPECT_EQ(o.time, 5555u);
}

// The kernel shares one MMAP2 record among every event watching a mapping and leaves
// PERF_RECORD_MISC_MMAP_BUILD_ID set in it once an event with attr.build_id has been written:
// an event without build-ids gets the bit over its {maj, min, ino, ino_generation} body. The
// first case is the record a perf record got for a dlopen'ed library while a build-id-taking
// collector watched the same process (kernel 6.18): maj 254, so a "build_id_size" of 254.
TEST(RecordDecoderTest, Mmap2BuildIdFlagOverADeviceAndInodeBodyIsReadAsTheDevice) {
  const Attr a = trailer_attr();
  Session session({{a, {0x99}}});
  constexpr uint16_t kFlagged = 2 | (1 << 14);
  Mmap2 spec{.pid = 5,
             .tid = 5,
             .start = 0x7f0000000000,
             .len = 0x1000,
             .pgoff = 0x1000,
             .maj = 254,
             .min = 0,
             .ino = 5415248,
             .ino_generation = 381501637,
             .build_id = {},
             .prot = 5,
             .flags = 2,
             .file = "/lib/liblive_plug.so"};
  auto big_major = std::get<MmapRecord>(session.decode(mmap2(spec, kTrailer, a, kFlagged)));
  EXPECT_TRUE(big_major.build_id.empty());
  EXPECT_TRUE(big_major.build_id_flag_ignored);
  EXPECT_EQ(big_major.maj, 254u);
  EXPECT_EQ(big_major.ino, 5415248u);
  EXPECT_EQ(big_major.ino_generation, 381501637u);
  EXPECT_EQ(big_major.filename, "/lib/liblive_plug.so");

  // A disk major within a build-id's size (8, sd): the generation after the "id" gives it away.
  spec.maj = 8;
  spec.min = 1;
  auto small_major = std::get<MmapRecord>(session.decode(mmap2(spec, kTrailer, a, kFlagged)));
  EXPECT_TRUE(small_major.build_id.empty());
  EXPECT_TRUE(small_major.build_id_flag_ignored);
  EXPECT_EQ(small_major.maj, 8u);
  EXPECT_EQ(small_major.min, 1u);

  // Device 0 (overlay, btrfs subvolumes): size 0 is no build-id either.
  spec.maj = 0;
  spec.ino_generation = 0;
  auto zero_major = std::get<MmapRecord>(session.decode(mmap2(spec, kTrailer, a, kFlagged)));
  EXPECT_TRUE(zero_major.build_id.empty());
  EXPECT_EQ(zero_major.ino, 5415248u);

  // Real build-ids of every common length still decode: 20 (sha1), 16 (md5, uuid), 8 (lld fast).
  for (size_t n : {20u, 16u, 8u}) {
    Mmap2 with_id = spec;
    with_id.build_id.assign(n, 0);
    for (size_t i = 0; i < n; ++i) with_id.build_id[i] = static_cast<uint8_t>(0xa0 + i);
    auto m = std::get<MmapRecord>(session.decode(mmap2(with_id, kTrailer, a)));
    EXPECT_EQ(m.build_id.size(), n);
    EXPECT_EQ(m.build_id.bytes()[0], 0xa0);
    EXPECT_FALSE(m.build_id_flag_ignored);
    EXPECT_EQ(m.ino, 0u);
  }
  // The record is not unflagged without the bit: a body that would pass as a build-id is a
  // device then.
  auto unflagged = std::get<MmapRecord>(session.decode(mmap2(spec, kTrailer, a)));
  EXPECT_FALSE(unflagged.build_id_flag_ignored);
}

// PERF_RECORD_AUX exactly as include/uapi/linux/perf_event.h lays it out, written byte by byte:
//   struct { struct perf_event_header header; u64 aux_offset; u64 aux_size; u64 flags;
//            struct sample_id sample_id; };
// with the trailer of the attr (here TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER) and the
// PERF_AUX_FLAG_* bits: TRUNCATED 0x01, OVERWRITE 0x02, PARTIAL 0x04, COLLISION 0x08, the PMU's
// format in 0xff00 (Arm SPE's raw format, 1, there).
TEST(RecordDecoderTest, AuxRecordInTheKernelsLayout) {
  const Attr a = trailer_attr();
  Session session({{a, {0x99}}});
  auto aux_record = [](uint64_t offset, uint64_t size, uint64_t flags) {
    std::vector<uint8_t> r;
    auto put = [&r](const void* p, size_t n) {
      r.insert(r.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    };
    auto u64 = [&put](uint64_t v) { put(&v, 8); };
    auto u32 = [&put](uint32_t v) { put(&v, 4); };
    const uint32_t type = 11;  // PERF_RECORD_AUX
    const uint16_t misc = 0, size_field = 8 + 3 * 8 + 6 * 8;
    put(&type, 4);
    put(&misc, 2);
    put(&size_field, 2);
    u64(offset);
    u64(size);
    u64(flags);
    u32(7);     // pid
    u32(8);     // tid
    u64(5555);  // time
    u64(0x99);  // id
    u64(3);     // stream_id
    u32(1);     // cpu
    u32(0);     // res
    u64(0x99);  // identifier
    EXPECT_EQ(r.size(), size_field);
    return r;
  };

  auto plain = std::get<AuxRecord>(session.decode(aux_record(0x10000, 0x2000, 0x0100)));
  EXPECT_EQ(plain.aux_offset, 0x10000u);
  EXPECT_EQ(plain.aux_size, 0x2000u);
  EXPECT_EQ(plain.flags, 0x0100u);
  EXPECT_EQ(plain.pmu_format(), 1u);
  EXPECT_FALSE(plain.truncated() || plain.overwrite() || plain.partial() || plain.collision());
  EXPECT_EQ(plain.time, 5555u);
  EXPECT_EQ(plain.id, 0x99u);

  for (uint64_t bit : {uint64_t{0x01}, uint64_t{0x02}, uint64_t{0x04}, uint64_t{0x08}}) {
    SCOPED_TRACE(bit);
    const auto r = std::get<AuxRecord>(session.decode(aux_record(0, 64, bit)));
    EXPECT_EQ(r.truncated(), bit == 0x01);
    EXPECT_EQ(r.overwrite(), bit == 0x02);
    EXPECT_EQ(r.partial(), bit == 0x04);
    EXPECT_EQ(r.collision(), bit == 0x08);
    EXPECT_EQ(r.pmu_format(), 0u);
  }
  // One word short: the flags run into the trailer.
  EXPECT_THROW(session.decode(shortened(aux_record(0, 64, 0), 8)), RecordFormatError);
}

TEST(RecordDecoderTest, WithoutSampleIdAllThereIsNoTrailer) {
  Attr a = trailer_attr();
  a.flags &= ~kFlagSampleIdAll;
  Session session({{a, {}}});
  auto m = std::get<MmapRecord>(session.decode(mmap(1, 2, 3, 4, "/lib/x.so", kTrailer, a)));
  EXPECT_EQ(m.time, kNoTime);
  EXPECT_EQ(m.filename, "/lib/x.so");
  // FORK/EXIT and THROTTLE carry their own time.
  EXPECT_EQ(std::get<TaskRecord>(session.decode(task(false, 1, 1, 1, 1, 777, kTrailer, a))).time,
            777u);
  EXPECT_EQ(std::get<ThrottleRecord>(session.decode(throttle(false, 888, 1, kTrailer, a))).time,
            888u);
}

TEST(RecordDecoderTest, RecordTooShortForItsTrailer) {
  const Attr a = trailer_attr();
  Session session({{a, {}}});
  const auto rec = comm(1, 1, "x", false, kTrailer, a);
  EXPECT_THROW(session.decode(shortened(rec, rec.size() - 16)), RecordFormatError);
}

TEST(RecordDecoderTest, FindsTheAttrOfASampleByIdentifier) {
  Attr a = trailer_attr(), b = trailer_attr();
  b.config = 1;
  b.sample_type &= ~PERIOD;  // layouts may differ after the identifier
  Session session({{a, {11, 12}}, {b, {21, 22}}});
  Sample s;
  s.ip = 5;
  s.identifier = s.id = 22;
  s.period = 9;
  auto d = std::get<SampleRecord>(session.decode(sample(s, b)));
  EXPECT_EQ(d.attr_index, 1u);
  EXPECT_EQ(d.period, 1u);  // attr b has no PERIOD
  s.identifier = s.id = 12;
  d = std::get<SampleRecord>(session.decode(sample(s, a)));
  EXPECT_EQ(d.attr_index, 0u);
  EXPECT_EQ(d.period, 9u);
  // Synthesized records have id 0: the first attr.
  s.identifier = s.id = 0;
  EXPECT_EQ(std::get<SampleRecord>(session.decode(sample(s, a))).attr_index, 0u);
  // An id of no attr: perf drops such samples; we say what it was.
  s.identifier = s.id = 33;
  auto o = std::get<OtherRecord>(session.decode(sample(s, a)));
  EXPECT_EQ(o.type, 9u);
  EXPECT_EQ(o.time, kNoTime);
}

TEST(RecordDecoderTest, FindsTheAttrOfASampleByIdWithoutIdentifier) {
  Attr a;
  a.sample_type = IP | TID | TIME | ID | CPU | PERIOD;  // the id is the 4th word
  Attr b = a;
  b.config = 1;
  Session session({{a, {11}}, {b, {21}}});
  Sample s;
  s.ip = 1;
  s.id = 21;
  EXPECT_EQ(std::get<SampleRecord>(session.decode(sample(s, b))).attr_index, 1u);
  s.id = 11;
  EXPECT_EQ(std::get<SampleRecord>(session.decode(sample(s, a))).attr_index, 0u);
  // Non-sample records: the id sits 2 words from the end (ID, then CPU).
  SampleId t{.pid = 1, .tid = 1, .cpu = 0, .time = 50, .id = 21, .stream_id = 0};
  EXPECT_EQ(std::get<CommRecord>(session.decode(comm(1, 1, "c", false, t, b))).time, 50u);
}

TEST(RecordDecoderTest, SingleAttrWithoutIdsTakesEverySample) {
  Attr a;
  a.sample_type = IP | TID | TIME | ID | PERIOD;
  Session session({{a, {}}});  // old files and pipes without attr ids
  Sample s;
  s.id = 12345;
  s.period = 2;
  auto d = std::get<SampleRecord>(session.decode(sample(s, a)));
  EXPECT_EQ(d.attr_index, 0u);
  EXPECT_EQ(d.period, 2u);
}

TEST(RecordDecoderTest, CountsThatRunPastTheRecordFailInsteadOfWrapping) {
  struct Case {
    uint64_t sample_type;
    std::vector<uint64_t> words;  // the body after IP
  };
  const uint64_t huge = 1ULL << 61;  // * 8 or * 24 wraps a 64-bit size
  const std::vector<Case> cases = {
      {IP | CALLCHAIN, {huge, 1}},
      {IP | BRANCH_STACK, {huge / 3 * 2 + 1, 1, 2, 3}},
      {IP | BRANCH_STACK, {UINT64_MAX, 1, 2, 3}},
      {IP | STACK_USER, {UINT64_MAX - 4, 0}},
      {IP | AUX, {UINT64_MAX, 0}},
      {IP | RAW, {0xffffffff00000000ULL | 0xfffffff0, 0}},
  };
  for (const Case& c : cases) {
    Attr a;
    a.sample_type = c.sample_type;
    Session session({{a, {}}});
    Bytes body;
    body.u64(0x1);
    for (uint64_t w : c.words) body.u64(w);
    EXPECT_THROW(session.decode(record(9, 2, body)), RecordFormatError) << c.sample_type;
  }
  Attr g;
  g.sample_type = IP | READ;
  g.read_format = FMT_GROUP | FMT_ID;
  Session session({{g, {}}});
  Bytes body;
  body.u64(1).u64(huge).u64(0);
  EXPECT_THROW(session.decode(record(9, 2, body)), RecordFormatError);
}

TEST(RecordDecoderTest, Ver0AttrWithoutBranchOrRegisterFields) {
  Attr a;
  a.size = 64;  // the first perf_event_attr: nothing past bp_addr
  a.sample_type = IP | TID | TIME | PERIOD | REGS_USER;
  a.sample_regs_user = 0xff;  // not stored in a 64-byte attr: must read as 0
  Session session({{a, {}}});
  Sample s;
  s.ip = 3;
  s.regs_user_abi = 2;  // with mask 0 no register words follow
  Attr as_read = a;
  as_read.sample_regs_user = 0;
  const auto rec = sample(s, as_read);
  EXPECT_EQ(std::get<SampleRecord>(session.decode(rec)).ip, 3u);
  EXPECT_THROW(session.decode(shortened(rec, 8)), RecordFormatError);
}

}  // namespace
}  // namespace profcollect
