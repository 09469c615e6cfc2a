// BbAddrMap::decode on sections encoded here by LLVM 19's layout as mapper/bb_addr_map.h
// describes it (the layout itself is judged against llvm-readobj-19 on clang-19's output in
// tests/integration/bb_addr_map_test.cpp): every version and feature, the lookups, each kind of
// damage, and a section cut or overwritten at every byte.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "mapper/bb_addr_map.h"
#include "tests/unit/bb_addr_map_encoder.h"

namespace profcollect {
namespace {

using Kind = BbAddrMapError::Kind;
using namespace bb_addr_map_encoding;

BbAddrMap decode(const std::vector<uint8_t>& bytes, BbAddrMapEncoding encoding = {}) {
  return BbAddrMap::decode(bytes, encoding, "test");
}

// What decode throws, as (kind, byte); fails the test when it does not throw.
BbAddrMapError decode_error(const std::vector<uint8_t>& bytes, BbAddrMapEncoding encoding = {}) {
  try {
    decode(bytes, encoding);
  } catch (const BbAddrMapError& e) {
    return e;
  }
  ADD_FAILURE() << "decoded without an error";
  return BbAddrMapError(Kind::Malformed, "none");
}

// Two functions: one range of three blocks (version 2, no features), then one of two ranges
// with every PGO feature.
std::vector<uint8_t> two_functions() {
  Encoder e;
  e.header(2, 0).address(0x401000).uleb(3);
  e.block(0, 0, 8, kFallThrough).block(2, 4, 6, 0).block(1, 0, 3, kReturn);
  e.header(2, kEntryCount | kFreq | kProb | kRanges).uleb(2);
  e.address(0x401100).uleb(2).block(0, 0, 5, kFallThrough).block(3, 0, 2, kIndirect);
  e.address(0x402000).uleb(1).block(1, 0, 9, kTailCall | kReturn);
  e.uleb(77);                                                              // entry count
  e.uleb(1000).uleb(2).uleb(3).uleb(0x60000000).uleb(1).uleb(0x20000000);  // block 0
  e.uleb(600).uleb(1).uleb(1).uleb(0x80000000);                            // block 3
  e.uleb(200).uleb(0);                                                     // block 1
  return e.bytes;
}

TEST(BbAddrMapDecode, ReadsVersionTwoWithRangesAndPgo) {
  const BbAddrMap map = decode(two_functions());
  ASSERT_EQ(map.functions().size(), 2u);

  const BbFunction& f = map.functions()[0];
  EXPECT_EQ(f.version, 2);
  EXPECT_EQ(f.features, BbAddrMapFeatures{});
  EXPECT_EQ(f.address(), 0x401000u);
  EXPECT_EQ(f.section_offset, 0u);
  ASSERT_EQ(f.ranges.size(), 1u);
  const auto& b = f.ranges[0].blocks;
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].id, 0u);
  EXPECT_EQ(b[0].offset, 0u);
  EXPECT_TRUE(b[0].can_fall_through);
  EXPECT_EQ(b[1].id, 2u);
  EXPECT_EQ(b[1].offset, 12u) << "4 bytes after the end of the block before";
  EXPECT_EQ(b[2].offset, 18u);
  EXPECT_TRUE(b[2].has_return);
  EXPECT_FALSE(b[2].can_fall_through);
  EXPECT_EQ(f.ranges[0].end(), 0x401000u + 21);
  EXPECT_TRUE(f.pgo_blocks.empty());

  const BbFunction& g = map.functions()[1];
  EXPECT_TRUE(g.features.func_entry_count && g.features.bb_freq && g.features.br_prob &&
              g.features.multi_bb_range);
  ASSERT_EQ(g.ranges.size(), 2u);
  EXPECT_EQ(g.ranges[1].address, 0x402000u);
  EXPECT_EQ(g.ranges[1].blocks[0].offset, 0u) << "offsets start again in each range";
  EXPECT_TRUE(g.ranges[0].blocks[1].has_indirect_branch);
  EXPECT_TRUE(g.ranges[1].blocks[0].has_tail_call);
  EXPECT_EQ(g.block_count(), 3u);
  EXPECT_EQ(g.entry_count, 77u);
  ASSERT_EQ(g.pgo_blocks.size(), 3u);
  EXPECT_EQ(g.pgo_blocks[0].frequency, 1000u);
  ASSERT_EQ(g.pgo_blocks[0].successors.size(), 2u);
  EXPECT_EQ(g.pgo_blocks[0].successors[1].id, 1u);
  EXPECT_EQ(g.pgo_blocks[0].successors[1].probability, 0x20000000u);
  EXPECT_EQ(g.pgo_blocks[1].successors[0].probability, 0x80000000u);
  EXPECT_TRUE(g.pgo_blocks[2].successors.empty());
}

TEST(BbAddrMapDecode, ReadsVersionsZeroAndOne) {
  Encoder e;
  // Version 0: offsets from the range's start, IDs are the blocks' indices.
  e.header(0, 0).address(0x1000).uleb(2).uleb(0).uleb(4).uleb(kFallThrough);
  e.uleb(6).uleb(6).uleb(kReturn);
  // Version 1: offsets from the previous block's end, still no IDs.
  e.header(1, 0).address(0x1020).uleb(2).uleb(0).uleb(3).uleb(kEhPad);
  e.uleb(1).uleb(5).uleb(kReturn);
  const BbAddrMap map = decode(e.bytes);
  ASSERT_EQ(map.functions().size(), 2u);
  const auto& v0 = map.functions()[0].ranges[0].blocks;
  EXPECT_EQ(v0[1].id, 1u);
  EXPECT_EQ(v0[1].offset, 6u);
  const auto& v1 = map.functions()[1].ranges[0].blocks;
  EXPECT_TRUE(v1[0].is_eh_pad);
  EXPECT_EQ(v1[1].id, 1u);
  EXPECT_EQ(v1[1].offset, 4u);
}

TEST(BbAddrMapDecode, ReadsFourByteBigEndianAddresses) {
  Encoder e(4, false);
  e.header(2, 0).address(0x10002000).uleb(1).block(0, 0, 4, kReturn);
  const BbAddrMap map = decode(e.bytes, {4, false});
  ASSERT_EQ(map.functions().size(), 1u);
  EXPECT_EQ(map.functions()[0].address(), 0x10002000u);
  EXPECT_THROW(BbAddrMap::decode(e.bytes, {3, true}), std::invalid_argument);
}

TEST(BbAddrMapDecode, AnEmptySectionHoldsNoFunction) {
  EXPECT_TRUE(decode({}).functions().empty());
}

TEST(BbAddrMapDecode, FindsFunctionsAndBlocks) {
  const BbAddrMap map = decode(two_functions());
  EXPECT_EQ(map.function_at(0x401000), &map.functions()[0]);
  EXPECT_EQ(map.function_at(0x401100), &map.functions()[1]);
  EXPECT_EQ(map.function_at(0x402000), nullptr) << "a cold range is not a function's entry";
  EXPECT_EQ(map.function_at(0x401001), nullptr);

  auto block_id = [&](uint64_t address) -> int64_t {
    const BbLocation at = map.find(address);
    return at.block != nullptr ? at.block->id : -1;
  };
  EXPECT_EQ(block_id(0x401000), 0);
  EXPECT_EQ(block_id(0x401007), 0);
  // The 4 bytes between blocks 0 and 2 (padding) are the function's but no block's.
  const BbLocation gap = map.find(0x401009);
  EXPECT_EQ(gap.function, &map.functions()[0]);
  EXPECT_EQ(gap.block, nullptr);
  EXPECT_EQ(block_id(0x40100c), 2);
  EXPECT_EQ(block_id(0x401014), 1);
  EXPECT_EQ(map.find(0x401015).function, nullptr) << "past the last block";
  EXPECT_EQ(map.find(0x400fff).function, nullptr);
  EXPECT_EQ(block_id(0x401105), 3);
  const BbLocation cold = map.find(0x402008);
  EXPECT_EQ(cold.function, &map.functions()[1]);
  EXPECT_EQ(cold.range, &map.functions()[1].ranges[1]);
  EXPECT_EQ(cold.block->id, 1u);
  EXPECT_EQ(map.find(0x402009).function, nullptr);
  EXPECT_EQ(map.find(UINT64_MAX).function, nullptr);
}

TEST(BbAddrMapDecode, AZeroSizeBlockHoldsNoAddress) {
  Encoder e;
  e.header(2, 0).address(0x1000).uleb(3);
  e.block(0, 0, 0, kFallThrough).block(1, 0, 4, kFallThrough).block(2, 0, 0, kFallThrough);
  const BbAddrMap map = decode(e.bytes);
  EXPECT_EQ(map.find(0x1000).block->id, 1u);
  EXPECT_EQ(map.find(0x1003).block->id, 1u);
  EXPECT_EQ(map.find(0x1004).function, nullptr);
}

TEST(BbAddrMapDecode, FoldedFunctionsAreFoundAsTheFirstOfTheSection) {
  // Identical code folding leaves two entries at one address.
  Encoder e;
  e.header(2, 0).address(0x2000).uleb(1).block(0, 0, 16, kReturn);
  e.header(2, 0).address(0x1000).uleb(1).block(0, 0, 8, kReturn);
  e.header(2, 0).address(0x2000).uleb(1).block(0, 0, 16, kReturn);
  const BbAddrMap map = decode(e.bytes);
  EXPECT_EQ(map.find(0x2004).function, &map.functions()[0]);
  EXPECT_EQ(map.function_at(0x2000), &map.functions()[0]);
  EXPECT_EQ(map.find(0x1004).function, &map.functions()[1]);
}

TEST(BbAddrMapDecode, RefusesAnUnknownVersionNamingIt) {
  Encoder e;
  e.header(2, 0).address(0x1000).uleb(1).block(0, 0, 4, kReturn);
  e.header(3, 0).address(0x2000).uleb(0);
  const BbAddrMapError error = decode_error(e.bytes);
  EXPECT_EQ(error.kind(), Kind::Unsupported);
  EXPECT_EQ(error.section_offset(), 15u) << "where the second function begins";
  EXPECT_NE(std::string(error.what()).find("version 3"), std::string::npos) << error.what();
  EXPECT_EQ(std::string(error.what()).rfind("test: at byte 0xf of the section", 0), 0u)
      << error.what();
}

struct Damage {
  const char* name;
  std::vector<uint8_t> bytes;
  size_t offset;  // where the error must be reported
  const char* reason;
};

std::vector<Damage> damages() {
  std::vector<Damage> d;
  d.push_back({"unknown feature bit", Encoder().header(2, 0x10).bytes, 1, "unknown feature bits"});
  d.push_back({"features below version 2", Encoder().header(1, kFreq).bytes, 1, "need version 2"});
  d.push_back({"zero ranges", Encoder().header(2, kRanges).uleb(0).bytes, 2, "zero ranges"});
  d.push_back({"unknown metadata bit",
               Encoder().header(2, 0).address(0).uleb(1).block(0, 0, 1, 32).bytes, 14,
               "unknown block metadata bits"});
  d.push_back({"an ID past 32 bits",
               Encoder().header(2, 0).address(0).uleb(1).uleb(uint64_t{1} << 32).bytes, 11,
               "does not fit 32 bits"});
  d.push_back({"a ULEB past 64 bits",
               Encoder()
                   .header(2, kEntryCount)
                   .address(0)
                   .uleb(0)
                   .raw({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
                   .bytes,
               11, "does not fit 64 bits"});
  // Counts that the bytes left cannot hold: refused before anything is sized by them.
  d.push_back({"2^40 blocks", Encoder().header(2, 0).address(0).uleb(uint64_t{1} << 40).bytes, 10,
               "the number of blocks"});
  d.push_back({"2^31 ranges", Encoder().header(2, kRanges).uleb(uint64_t{1} << 31).bytes, 2,
               "the number of ranges"});
  d.push_back({"2^60 successors",
               Encoder()
                   .header(2, kProb)
                   .address(0)
                   .uleb(1)
                   .block(0, 0, 1, 0)
                   .uleb(uint64_t{1} << 60)
                   .bytes,
               15, "the number of successors"});
  d.push_back({"PGO blocks past the end",
               Encoder()
                   .header(2, kFreq)
                   .address(0)
                   .uleb(2)
                   .block(0, 0, 1, 0)
                   .block(1, 0, 1, 0)
                   .uleb(5)
                   .bytes,
               19, "PGO data for 2 blocks"});
  // A block whose end passes 4 GiB from its range's start (LLVM would wrap it).
  d.push_back({"a block past 4 GiB",
               Encoder()
                   .header(2, 0)
                   .address(0)
                   .uleb(2)
                   .block(0, 0, 0xfffffff0u, 0)
                   .block(1, 0x20, 1, 0)
                   .bytes,
               19, "4 GiB"});
  d.push_back({"a range past 2^64",
               Encoder().header(2, 0).address(UINT64_MAX - 2).uleb(1).block(0, 0, 8, 0).bytes, 2,
               "passes 2^64"});
  d.push_back({"version 0 blocks out of order",
               Encoder()
                   .header(0, 0)
                   .address(0)
                   .uleb(2)
                   .uleb(8)
                   .uleb(4)
                   .uleb(0)
                   .uleb(2)
                   .uleb(1)
                   .uleb(0)
                   .bytes,
               14, "before the end"});
  d.push_back({"cut inside an address", Encoder().header(2, 0).u8(0).u8(0x10).bytes, 2,
               "ends inside a function or range address"});
  return d;
}

TEST(BbAddrMapDecode, NamesTheByteAndTheReasonOfEachDamage) {
  for (const Damage& damage : damages()) {
    SCOPED_TRACE(damage.name);
    const BbAddrMapError error = decode_error(damage.bytes);
    EXPECT_EQ(error.kind(), Kind::Malformed);
    EXPECT_EQ(error.section_offset(), damage.offset) << error.what();
    EXPECT_NE(std::string(error.what()).find(damage.reason), std::string::npos) << error.what();
  }
}

// Cut at every byte: an error at or before the cut (never a read past it), or, at a function's
// end, the functions before it.
TEST(BbAddrMapDecode, ASectionCutAtEveryByte) {
  const std::vector<uint8_t> whole = two_functions();
  const size_t first_end = 23;  // 2 header bytes, 8 of address, 1 of count, 3 blocks of 4
  for (size_t n = 0; n < whole.size(); ++n) {
    SCOPED_TRACE(n);
    const std::vector<uint8_t> cut(whole.begin(), whole.begin() + n);
    if (n == 0 || n == first_end) {
      EXPECT_EQ(decode(cut).functions().size(), n == 0 ? 0u : 1u);
      continue;
    }
    const BbAddrMapError error = decode_error(cut);
    EXPECT_EQ(error.kind(), Kind::Malformed);
    EXPECT_LE(error.section_offset(), n);
  }
}

// Every byte overwritten with each of a few values: decoded or refused, nothing else.
TEST(BbAddrMapDecode, EveryByteOverwritten) {
  const std::vector<uint8_t> whole = two_functions();
  size_t decoded = 0, refused = 0;
  for (size_t i = 0; i < whole.size(); ++i) {
    for (uint8_t value : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      std::vector<uint8_t> bytes = whole;
      bytes[i] = value;
      try {
        const BbAddrMap map = decode(bytes);
        for (const BbFunction& f : map.functions()) {
          EXPECT_FALSE(f.ranges.empty());
          for (const BbRange& r : f.ranges) map.find(r.address);
        }
        ++decoded;
      } catch (const BbAddrMapError& e) {
        EXPECT_LE(e.section_offset(), bytes.size());
        ++refused;
      }
    }
  }
  EXPECT_GT(decoded, 0u);
  EXPECT_GT(refused, 0u);
}

}  // namespace
}  // namespace profcollect
