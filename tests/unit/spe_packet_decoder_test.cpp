// The Arm SPE packet decoder against streams built from the architecture's encodings
// (tests/fixtures/spe_writer/spe_packet_encoder.h): every packet kind, both header forms, the
// address formats (EL, NS and top-byte rules), record ends, resynchronisation and truncation.
#include "collector/aux/spe_packet_decoder.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/fixtures/spe_writer/spe_packet_encoder.h"
#include "tests/support/allocation_counter.h"

// Records are spelled with designated initializers naming only the fields that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace profcollect {
namespace {

using spe_fixture::SpePacketEncoder;
using spe_fixture::SpeRecordSpec;

std::vector<spe::Record> decode_all(const std::vector<uint8_t>& bytes,
                                    spe::DecodeCounts* counts = nullptr) {
  spe::SpePacketDecoder decoder(bytes);
  std::vector<spe::Record> out;
  spe::Record r;
  while (decoder.next(r)) out.push_back(r);
  if (counts) *counts = decoder.counts();
  return out;
}

TEST(SpePacketDecoder, ReadsEveryPacketKindInBothHeaderForms) {
  SpePacketEncoder e;
  e.pad(3);
  e.address(0, SpePacketEncoder::code_address(0x400123, 0, true));
  e.address(0, SpePacketEncoder::code_address(0x400124, 0, true), /*extended=*/true);
  e.counter(2, 0x1234, /*extended=*/true);
  e.counter(1, 9);
  e.context(1, 0xabcd);
  e.operation(2, 0x3);
  e.events(0x40082, 2);
  e.data_source(0x55, 0);
  e.timestamp(0x1122334455667788ULL);
  e.end();
  const std::vector<uint8_t>& b = e.bytes;
  spe::Packet p;
  size_t at = 0;
  auto next = [&]() {
    EXPECT_EQ(spe::read_packet(std::span(b).subspan(at), p), spe::PacketStatus::kOk);
    at += p.size;
  };
  for (int i = 0; i < 3; ++i) {
    next();
    EXPECT_EQ(p.kind, spe::PacketKind::kPad);
  }
  next();
  EXPECT_EQ(p.kind, spe::PacketKind::kAddress);
  EXPECT_EQ(p.index, spe::kAddressPc);
  EXPECT_FALSE(p.extended);
  EXPECT_EQ(p.size, 9);
  next();
  EXPECT_EQ(p.kind, spe::PacketKind::kAddress);
  EXPECT_TRUE(p.extended);
  EXPECT_EQ(p.size, 10);
  EXPECT_EQ(spe::address_of(p.index, p.payload), 0x400124u);
  next();
  EXPECT_EQ(p.kind, spe::PacketKind::kCounter);
  EXPECT_EQ(p.index, spe::kCounterTranslationLatency);
  EXPECT_EQ(p.payload, 0x1234u);
  EXPECT_EQ(p.size, 4);
  next();
  EXPECT_EQ(p.kind, spe::PacketKind::kCounter);
  EXPECT_EQ(p.index, spe::kCounterIssueLatency);
  EXPECT_EQ(p.payload, 9u);
  next();
  EXPECT_EQ(p.kind, spe::PacketKind::kContext);
  EXPECT_EQ(p.index, 1);
  EXPECT_EQ(p.payload, 0xabcdu);
  next();
  EXPECT_EQ(p.kind, spe::PacketKind::kOperationType);
  EXPECT_EQ(p.index, 2);
  EXPECT_EQ(p.payload, 3u);
  next();
  EXPECT_EQ(p.kind, spe::PacketKind::kEvents);
  EXPECT_EQ(p.payload, 0x40082u);
  EXPECT_EQ(p.size, 5);
  next();
  EXPECT_EQ(p.kind, spe::PacketKind::kDataSource);
  EXPECT_EQ(p.payload, 0x55u);
  EXPECT_EQ(p.size, 2);
  next();
  EXPECT_EQ(p.kind, spe::PacketKind::kTimestamp);
  EXPECT_EQ(p.payload, 0x1122334455667788ULL);
  next();
  EXPECT_EQ(p.kind, spe::PacketKind::kEnd);
  EXPECT_EQ(at, b.size());
}

TEST(SpePacketDecoder, ExtendedHeaderCarriesHighIndexBits) {
  SpePacketEncoder e;
  e.address(9, 0x77, /*extended=*/true);  // 0x21 0xb1
  ASSERT_EQ(e.bytes[0], 0x21);
  ASSERT_EQ(e.bytes[1], 0xb1);
  spe::Packet p;
  ASSERT_EQ(spe::read_packet(e.bytes, p), spe::PacketStatus::kOk);
  EXPECT_EQ(p.index, 9);
}

TEST(SpePacketDecoder, AddressFormatsFollowElNsAndTopByteRules) {
  // PC at EL1, non-secure: the kernel half, top byte all ones.
  EXPECT_EQ(spe::address_of(0, SpePacketEncoder::code_address(0xffff800008123456ULL, 1, true)),
            0xffff800008123456ULL);
  // EL2 non-secure (VHE) likewise; EL2 secure and EL3 keep the 56 bits.
  EXPECT_EQ(spe::address_of(1, SpePacketEncoder::code_address(0xffff800008000000ULL, 2, true)),
            0xffff800008000000ULL);
  EXPECT_EQ(spe::address_of(0, SpePacketEncoder::code_address(0xffff800008000000ULL, 3, true)),
            0x00ff800008000000ULL);
  EXPECT_EQ(spe::address_of(0, SpePacketEncoder::code_address(0xffff800008000000ULL, 1, false)),
            0x00ff800008000000ULL);
  // EL0: a user address as it is.
  EXPECT_EQ(spe::address_of(0, SpePacketEncoder::code_address(0x0000aaaadead0000ULL, 0, true)),
            0x0000aaaadead0000ULL);
  // Data VA: the tag goes; bits [55:52] all ones fill the top byte.
  EXPECT_EQ(spe::address_of(2, SpePacketEncoder::data_address(0x0000ffffc0001000ULL, 0x5a)),
            0x0000ffffc0001000ULL);
  EXPECT_EQ(spe::address_of(2, SpePacketEncoder::data_address(0xfff0000000001000ULL, 0x00)),
            0xfff0000000001000ULL);
  // PA: NS, CH and PAT above bit 55 are dropped.
  EXPECT_EQ(spe::address_of(3, SpePacketEncoder::physical_address(0x80001000, true, true, 7)),
            0x80001000u);
  const uint64_t payload = SpePacketEncoder::code_address(0x1000, 2, true);
  EXPECT_EQ(spe::exception_level_of(payload), 2);
  EXPECT_TRUE(spe::non_secure_of(payload));
}

TEST(SpePacketDecoder, TurnsRecordsIntoPcLevelClassTargetTakenMispredicted) {
  SpePacketEncoder e;
  // A taken, mispredicted conditional branch ending in TIMESTAMP, with the extended headers.
  SpeRecordSpec taken{.pc = 0x400100,
                      .el = 0,
                      .op_class = 2,
                      .subclass = 1,
                      .target = 0x400200,
                      .events = 0x2 | 0x80,
                      .context = 42,
                      .timestamp = 1000,
                      .extended_headers = true};
  // A not-taken conditional branch ending in END.
  SpeRecordSpec not_taken{
      .pc = 0x400104, .op_class = 2, .subclass = 1, .target = 0x400300, .events = 0x2 | 0x40};
  // A kernel store with both data addresses, and an "other" operation.
  SpeRecordSpec store{.pc = 0xffff800008001000ULL,
                      .el = 1,
                      .op_class = 1,
                      .subclass = 1,
                      .events = 0x2 | 0x4 | 0x8,
                      .data_va = 0xffff000012345678ULL,
                      .data_tag = 0,
                      .data_pa = 0x812345678ULL,
                      .context = 7,
                      .timestamp = 2000,
                      .translation_latency = 11,
                      .data_source = 0x3};
  SpeRecordSpec other{.pc = 0x400108, .op_class = 0, .events = 0x2, .timestamp = 3000};
  for (const auto& r : {taken, not_taken, store, other}) spe_fixture::encode_record(e, r);
  e.pad(5);
  spe::DecodeCounts counts;
  const auto records = decode_all(e.bytes, &counts);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(counts.records, 4u);
  EXPECT_EQ(counts.bytes_skipped, 0u);
  EXPECT_EQ(counts.bytes_truncated, 0u);

  EXPECT_EQ(records[0].pc, 0x400100u);
  EXPECT_EQ(records[0].exception_level, 0);
  EXPECT_TRUE(records[0].is_branch());
  EXPECT_TRUE(records[0].has_branch_target);
  EXPECT_EQ(records[0].branch_target, 0x400200u);
  EXPECT_TRUE(records[0].taken());
  EXPECT_TRUE(records[0].mispredicted());
  EXPECT_TRUE(records[0].operation_subclass & spe::kBranchConditional);
  EXPECT_EQ(records[0].context, 42u);
  EXPECT_EQ(records[0].timestamp, 1000u);

  EXPECT_TRUE(records[1].is_branch());
  EXPECT_FALSE(records[1].taken());
  EXPECT_FALSE(records[1].mispredicted());
  EXPECT_FALSE(records[1].has_timestamp);

  EXPECT_EQ(records[2].pc, 0xffff800008001000ULL);
  EXPECT_EQ(records[2].exception_level, 1);
  EXPECT_EQ(records[2].operation, spe::OperationClass::kLoadStore);
  EXPECT_FALSE(records[2].taken());
  EXPECT_EQ(records[2].data_virtual, 0xffff000012345678ULL);
  EXPECT_EQ(records[2].data_physical, 0x812345678ULL);
  EXPECT_EQ(records[2].translation_latency, 11);
  EXPECT_EQ(records[2].total_latency, 7);
  EXPECT_EQ(records[2].issue_latency, 3);
  EXPECT_EQ(records[2].data_source, 3u);
  EXPECT_EQ(records[2].events, 0x2u | 0x4 | 0x8);

  EXPECT_EQ(records[3].operation, spe::OperationClass::kOther);
  EXPECT_FALSE(records[3].taken());
}

TEST(SpePacketDecoder, IndirectBranchSubclass) {
  EXPECT_TRUE(spe::is_indirect_branch(0x02));
  EXPECT_TRUE(spe::is_indirect_branch(0x03));
  EXPECT_FALSE(spe::is_indirect_branch(0x01));
  EXPECT_FALSE(spe::is_indirect_branch(0x06));
}

TEST(SpePacketDecoder, ResynchronisesAfterBadBytesAndCountsThem) {
  SpePacketEncoder e;
  spe_fixture::encode_record(e, {.pc = 0x1000, .op_class = 2, .target = 0x2000, .timestamp = 1});
  const size_t first_end = e.bytes.size();
  // A record cut by garbage: its PC and latencies, then bytes that are no header.
  e.address(0, SpePacketEncoder::code_address(0x1004, 0, true));
  e.bytes.insert(e.bytes.end(), {0xff, 0xfe, 0x02, 0x10});
  spe_fixture::encode_record(e, {.pc = 0x1008, .op_class = 0, .timestamp = 2});
  ASSERT_GT(e.bytes.size(), first_end);
  spe::DecodeCounts counts;
  const auto records = decode_all(e.bytes, &counts);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].pc, 0x1000u);
  EXPECT_EQ(records[1].pc, 0x1008u);
  EXPECT_EQ(counts.bytes_skipped, 4u);
  EXPECT_EQ(counts.records_dropped, 1u);
}

TEST(SpePacketDecoder, RecordWithoutPcIsCountedNotReturned) {
  SpePacketEncoder e;
  e.events(0x2);
  e.operation(0, 0);
  e.timestamp(5);
  spe_fixture::encode_record(e, {.pc = 0x3000, .timestamp = 6});
  spe::DecodeCounts counts;
  const auto records = decode_all(e.bytes, &counts);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(counts.records_without_pc, 1u);
}

TEST(SpePacketDecoder, TruncatedTailIsDroppedAndCounted) {
  SpePacketEncoder e;
  spe_fixture::encode_record(e, {.pc = 0x1000, .timestamp = 1});
  const size_t whole = e.bytes.size();
  spe_fixture::encode_record(e, {.pc = 0x1004, .timestamp = 2});
  for (size_t cut = whole + 1; cut < e.bytes.size(); ++cut) {
    std::vector<uint8_t> part(e.bytes.begin(), e.bytes.begin() + static_cast<ptrdiff_t>(cut));
    spe::DecodeCounts counts;
    const auto records = decode_all(part, &counts);
    ASSERT_EQ(records.size(), 1u) << "cut at " << cut;
    EXPECT_EQ(counts.bytes_truncated, cut - whole) << "cut at " << cut;
    EXPECT_EQ(counts.records_dropped, 1u);
  }
}

TEST(SpePacketDecoder, ReservedOperationClassIsABadHeader) {
  const std::vector<uint8_t> b{0x4b, 0x00};
  spe::Packet p;
  EXPECT_EQ(spe::read_packet(b, p), spe::PacketStatus::kBadHeader);
}

TEST(SpePacketDecoder, DecodingAllocatesNothing) {
  SpePacketEncoder e;
  for (uint64_t i = 0; i < 1000; ++i) {
    spe_fixture::encode_record(
        e, {.pc = 0x400000 + 4 * i, .op_class = 2, .target = 0x500000, .timestamp = i});
  }
  e.bytes.push_back(0xff);
  test::AllocationCounter counter;
  spe::SpePacketDecoder decoder(e.bytes);
  spe::Record r;
  size_t n = 0;
  while (decoder.next(r)) ++n;
  counter.stop();
  EXPECT_EQ(n, 1000u);
  EXPECT_EQ(counter.count(), 0u);
}

}  // namespace
}  // namespace profcollect
