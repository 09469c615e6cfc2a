// BOLT address translation tables, encoded here by LLVM 19's layout as BoltAddressTranslation.h
// describes it (the layout itself is judged on llvm-bolt-19's real output in
// tests/integration/bat_convert_test.cpp): parsing, perf2bolt's translation and fall-through
// rules, and damage at every byte.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mapper/bolt_address_translation.h"

namespace profcollect {
namespace {

struct Entry {
  uint32_t output, input;
  bool branch;
};

// Writes a BAT note: one ULEB/SLEB/raw value at a time.
class BatEncoder {
 public:
  void uleb(uint64_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      bytes_.push_back(v ? b | 0x80 : b);
    } while (v);
  }
  void sleb(int64_t v) {
    bool more = true;
    while (more) {
      uint8_t b = v & 0x7f;
      v >>= 7;
      more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
      bytes_.push_back(more ? b | 0x80 : b);
    }
  }
  void raw(uint8_t b) { bytes_.push_back(b); }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  // One function's or fragment's entries (the running address `previous` as the encoding keeps it).
  void entries(uint64_t address, const std::vector<Entry>& e, size_t equal, uint64_t& previous) {
    uleb(e.size());
    uleb(equal);
    if (equal) {
      std::vector<uint8_t> bits((equal + 7) / 8);
      for (size_t i = 0; i < equal; ++i)
        bits[i / 8] |= static_cast<uint8_t>(e[i].branch) << (i % 8);
      bytes_.insert(bytes_.end(), bits.begin(), bits.end());
    }
    uint64_t input = 0;
    for (size_t i = 0; i < e.size(); ++i) {
      uleb(address + e[i].output - previous);
      previous = address + e[i].output;
      const uint64_t value = uint64_t{e[i].input} << 1 | e[i].branch;
      if (i >= equal) sleb(static_cast<int64_t>(value - input));
      input = value;
      if (!e[i].branch) {
        u64(0x1234);  // block hash
        uleb(i);      // block index delta
      }
    }
  }
  std::vector<uint8_t> note(uint32_t type = 1, const char* name = "BOLT") const {
    std::vector<uint8_t> out;
    auto u32 = [&](uint32_t v) {
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
    };
    u32(5);
    u32(static_cast<uint32_t>(bytes_.size()));
    u32(type);
    for (int i = 0; i < 5; ++i) out.push_back(static_cast<uint8_t>(name[i]));
    out.resize(20, 0);
    out.insert(out.end(), bytes_.begin(), bytes_.end());
    return out;
  }

 private:
  std::vector<uint8_t> bytes_;
};

// Two hot functions (the first with a secondary entry point at 3) and a cold fragment of the
// second, as llvm-bolt lays out a split function.
std::vector<uint8_t> sample_table(uint32_t type = 1, const char* name = "BOLT") {
  BatEncoder enc;
  uint64_t previous = 0;
  enc.uleb(2);  // hot functions
  enc.uleb(0x1000 - previous);
  previous = 0x1000;
  enc.u64(0xabc);  // hash
  enc.uleb(4);     // blocks
  enc.uleb(1);     // secondary entry points
  enc.entries(
      0x1000,
      {{0, 0, false}, {3, 3, false}, {0xd, 0xd, true}, {0xf, 0xf, false}, {0x12, 0x12, false}}, 5,
      previous);
  enc.uleb(3);  // the secondary entry point's offset
  enc.uleb(0x1020 - previous);
  previous = 0x1020;
  enc.u64(0xdef);
  enc.uleb(3);
  enc.uleb(0);
  enc.entries(0x1020, {{0, 0, false}, {0xe, 0xe, true}, {0x14, 0x10, false}, {0x1f, 0x1b, true}}, 2,
              previous);
  enc.uleb(1);  // cold fragments
  enc.uleb(0x2000 - previous);
  previous = 0x2000;
  enc.uleb(1);     // hot index delta: the second hot function
  enc.uleb(0x22);  // skew
  enc.entries(0x2000, {{0, 0x22, false}, {0x10, 0x32, true}, {0x1b, 0x40, true}}, 2, previous);
  return enc.note(type, name);
}

TEST(BoltAddressTranslation, ParsesHotFunctionsColdFragmentsAndSecondaryEntries) {
  const BoltAddressTranslation bat = BoltAddressTranslation::parse(sample_table());
  ASSERT_EQ(bat.fragments().size(), 3u);
  EXPECT_EQ(bat.hot_functions(), 2u);
  EXPECT_EQ(bat.cold_fragments(), 1u);
  const BatFragment* first = bat.fragment(0x1000);
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->cold);
  EXPECT_EQ(first->hash, 0xabcu);
  EXPECT_EQ(first->blocks, 4u);
  EXPECT_EQ(first->secondary_entries, std::vector<uint64_t>{3});
  ASSERT_EQ(first->entries.size(), 5u);
  EXPECT_TRUE(first->entries[2].branch);
  const BatFragment* cold = bat.fragment(0x2000);
  ASSERT_TRUE(cold);
  EXPECT_TRUE(cold->cold);
  EXPECT_EQ(cold->hot_address, 0x1020u);
  ASSERT_EQ(cold->entries.size(), 3u);
  EXPECT_EQ(cold->entries[1].input_offset, 0x32u);  // equal entry: output + skew
  EXPECT_EQ(cold->entries[2].input_offset, 0x40u);
  EXPECT_EQ(bat.fragment(0x1001), nullptr);
}

TEST(BoltAddressTranslation, TranslatesAsPerf2boltDoes) {
  const BoltAddressTranslation bat = BoltAddressTranslation::parse(sample_table());
  const BatFragment& second = *bat.fragment(0x1020);
  // From the block at output 0x14 (input 0x10): the distance is kept...
  EXPECT_EQ(BoltAddressTranslation::translate(second, 0x16, false), 0x12u);
  // ...except for a branch source, which is the entry's own input offset.
  EXPECT_EQ(BoltAddressTranslation::translate(second, 0x16, true), 0x10u);
  EXPECT_EQ(BoltAddressTranslation::translate(second, 0x1f, true), 0x1bu);
  EXPECT_EQ(BoltAddressTranslation::translate(second, 0x21, false), 0x1du);
  const BatFragment& cold = *bat.fragment(0x2000);
  EXPECT_EQ(BoltAddressTranslation::translate(cold, 0x12, false), 0x34u);
  EXPECT_EQ(BoltAddressTranslation::translate(cold, 0x0, false), 0x22u);
}

// Code BOLT added after a branch (the jump to the fall-through block it moved away) has no
// input instruction: keeping its distance from the branch would pass the next input block's
// start, which is where that jump goes. It is that start (perf2bolt would say 0x12, the middle
// of whatever instruction lies there in the input).
TEST(BoltAddressTranslation, CodeBoltAddedAfterABranchIsTheNextInputBlock) {
  const BoltAddressTranslation bat = BoltAddressTranslation::parse(sample_table());
  const BatFragment& second = *bat.fragment(0x1020);
  EXPECT_EQ(second.entries[1].input_block_end, 0x10u);
  EXPECT_EQ(BoltAddressTranslation::translate(second, 0x12, false), 0x10u);
  EXPECT_EQ(BoltAddressTranslation::translate(second, 0x10, false), 0x10u);  // as perf2bolt
  EXPECT_EQ(BoltAddressTranslation::translate(second, 0xf, false), 0xfu);    // still its block
  // The next input block may lie in another fragment: the cold one's block at 0x22.
  EXPECT_EQ(second.entries[3].input_block_end, 0x22u);
  const BatFragment& cold = *bat.fragment(0x2000);
  EXPECT_EQ(cold.entries[2].input_block_end, UINT64_MAX);  // the function's last block
}

TEST(BoltAddressTranslation, FallThroughsCrossBlockBoundariesButNotBranchEntries) {
  const BoltAddressTranslation bat = BoltAddressTranslation::parse(sample_table());
  const BatFragment& first = *bat.fragment(0x1000);
  std::vector<std::pair<uint64_t, uint64_t>> out;
  BoltAddressTranslation::fall_throughs(first, 1, 0x11, out);
  EXPECT_EQ(out, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 3}, {3, 0xf}}));
  BoltAddressTranslation::fall_throughs(first, 4, 0xe, out);  // within one block
  EXPECT_TRUE(out.empty());
  BoltAddressTranslation::fall_throughs(first, 5, 3, out);  // backwards: nothing
  EXPECT_TRUE(out.empty());
  BoltAddressTranslation::fall_throughs(first, 0x10, 0x13, out);
  EXPECT_EQ(out, (std::vector<std::pair<uint64_t, uint64_t>>{{0xf, 0x12}}));
}

TEST(BoltAddressTranslation, EveryTruncationIsAnErrorNeverARead) {
  const std::vector<uint8_t> whole = sample_table();
  for (size_t size = 0; size < whole.size(); ++size) {
    std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<long>(size));
    EXPECT_THROW(BoltAddressTranslation::parse(cut), BatError) << size << " bytes";
  }
  // The note's own description size, cut short with the section.
  std::vector<uint8_t> short_desc = whole;
  short_desc[4] -= 1;
  EXPECT_THROW(BoltAddressTranslation::parse(short_desc), BatError);
}

TEST(BoltAddressTranslation, DamageIsNamed) {
  auto error_of = [](const std::vector<uint8_t>& bytes) -> std::string {
    try {
      BoltAddressTranslation::parse(bytes);
    } catch (const BatError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(sample_table(2)).find("type"), std::string::npos);
  EXPECT_NE(error_of(sample_table(1, "BOLX")).find("BOLT"), std::string::npos);
  std::vector<uint8_t> trailing = sample_table();
  trailing.push_back(0);
  trailing[4] += 1;  // the description holds the extra byte
  EXPECT_NE(error_of(trailing).find("follow the tables"), std::string::npos);
  {
    BatEncoder enc;
    uint64_t previous = 0;
    enc.uleb(0);       // no hot functions
    enc.uleb(1);       // one cold fragment
    enc.uleb(0x2000);  // address
    enc.uleb(0);       // hot index 0 of none
    enc.uleb(0);
    enc.entries(0x2000, {{0, 0, false}}, 1, previous);
    EXPECT_NE(error_of(enc.note()).find("hot function 0 of 0"), std::string::npos);
  }
  {
    BatEncoder enc;
    enc.uleb(1);
    for (int i = 0; i < 11; ++i) enc.raw(0x80);  // an address of eleven continuation bytes
    enc.raw(0);
    EXPECT_NE(error_of(enc.note()).find("64 bits"), std::string::npos);
  }
  {
    BatEncoder enc;
    enc.uleb(1);
    enc.uleb(0x1000);
    enc.u64(0);
    enc.uleb(1);
    enc.uleb(0);
    enc.uleb(1);  // one entry
    enc.uleb(2);  // two of them equal
    enc.uleb(0);
    EXPECT_NE(error_of(enc.note()).find("more equal entries"), std::string::npos);
  }
}

}  // namespace
}  // namespace profcollect
