// BbAddrMap on what clang-19 writes, judged by llvm-readobj-19 --bb-addr-map: every function's
// address, every range, every block's ID, offset, size and flags, and the PGO analysis map
// (entry counts, block frequencies, successors and their probabilities) must be the judge's.
// The binaries and the judge's output are the bb_addr_map fixture set
// (tests/fixtures/make_bb_addr_map_fixtures.sh, a few seconds); without clang-19 or
// llvm-readobj-19 the tests skip. Then the files the reader refuses, and copies of a binary
// whose section is damaged (in a directory of each test): a clean error naming the file, never a
// crash, and the judge's verdict on each copy.
#include <elf.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mapper/bb_addr_map.h"
#include "mapper/elf_binary.h"
#include "mapper/symbol_table.h"
#include "tests/integration/fixture_set.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using Kind = BbAddrMapError::Kind;

FixtureSet& bb_addr_map_set() {
  static FixtureSet set({.name = "bb_addr_map",
                         .script = "make_bb_addr_map_fixtures.sh",
                         .source_folder = "bb_addr_map_src"});
  return set;
}
[[maybe_unused]] const bool bb_addr_map_set_registered = register_fixture_set(&bb_addr_map_set);

// A file of the fixture set.
std::string fixture(const std::string& name) {
  return (bb_addr_map_set().status().dir / name).string();
}

// The tests of a suite run only when the fixture set is made (skipped when a tool is missing,
// failed when the script failed).
class BbAddrMapFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override { bb_addr_map_set().require_ready(); }
};

class BbAddrMapVsLlvmReadobj : public BbAddrMapFixtureTest {};
class BbAddrMapBinaries : public BbAddrMapFixtureTest {};

// ---- the judge's output -----------------------------------------------------------------------

struct JudgeFunction {
  uint64_t address = 0;
  std::vector<BbRange> ranges;
  bool pgo = false;  // a "PGO analyses" part
  uint64_t entry_count = 0;
  std::vector<BbPgoBlock> pgo_blocks;
};

uint64_t number(const std::string& text) { return std::stoull(text, nullptr, 0); }

// llvm-readobj-19 --bb-addr-map's LLVM-style output: "Function {" per function, its "At:",
// "Base Address:" per range, the block fields one per line, then optionally "PGO analyses {"
// with "FuncEntryCount:", and per block ("{" at 8 spaces) "Frequency:" and successors ("{" at
// 12 spaces) with "ID:" and "Probability:".
std::vector<JudgeFunction> read_judge(std::string_view output) {
  std::vector<JudgeFunction> functions;
  bool in_pgo = false;
  for (const std::string& line : split_lines(output)) {
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    const std::string text = line.substr(indent);
    const size_t colon = text.find(": ");
    const std::string key = colon == std::string::npos ? text : text.substr(0, colon);
    const std::string value = colon == std::string::npos ? "" : text.substr(colon + 2);
    if (text == "Function {") {
      functions.emplace_back();
      in_pgo = false;
      continue;
    }
    if (functions.empty()) continue;
    JudgeFunction& f = functions.back();
    if (text == "PGO analyses {") {
      in_pgo = f.pgo = true;
    } else if (in_pgo) {
      if (key == "FuncEntryCount") f.entry_count = number(value);
      if (text == "{" && indent == 8) f.pgo_blocks.emplace_back();
      if (f.pgo_blocks.empty()) continue;
      BbPgoBlock& b = f.pgo_blocks.back();
      if (key == "Frequency") b.frequency = number(value);
      if (text == "{" && indent == 12) b.successors.emplace_back();
      if (key == "ID") b.successors.back().id = static_cast<uint32_t>(number(value));
      if (key == "Probability")
        b.successors.back().probability = static_cast<uint32_t>(number(value));
    } else if (key == "At") {
      f.address = number(value);
    } else if (key == "Base Address") {
      f.ranges.push_back(BbRange{number(value), {}});
    } else if (!f.ranges.empty()) {
      std::vector<BbBlock>& blocks = f.ranges.back().blocks;
      if (key == "ID") blocks.emplace_back().id = static_cast<uint32_t>(number(value));
      if (blocks.empty()) continue;
      BbBlock& b = blocks.back();
      const bool yes = value == "Yes";
      if (key == "Offset") b.offset = static_cast<uint32_t>(number(value));
      if (key == "Size") b.size = static_cast<uint32_t>(number(value));
      if (key == "HasReturn") b.has_return = yes;
      if (key == "HasTailCall") b.has_tail_call = yes;
      if (key == "IsEHPad") b.is_eh_pad = yes;
      if (key == "CanFallThrough") b.can_fall_through = yes;
      if (key == "HasIndirectBranch") b.has_indirect_branch = yes;
    }
  }
  return functions;
}

// ---- comparison -------------------------------------------------------------------------------

struct Counts {
  size_t functions = 0, ranges = 0, blocks = 0, pgo_blocks = 0, successors = 0;
  size_t multi_range = 0, eh_pads = 0, indirect = 0, tail_calls = 0, entry_counted = 0;
};

std::string describe(const BbBlock& b) {
  std::ostringstream s;
  s << "ID " << b.id << " offset " << b.offset << " size " << b.size << " flags " << b.has_return
    << b.has_tail_call << b.is_eh_pad << b.can_fall_through << b.has_indirect_branch;
  return s.str();
}

// Our map of a binary against the judge's description of it, `judged` (its output).
void compare(const BbAddrMap& map, std::string_view judged, Counts& counts) {
  const std::vector<JudgeFunction> judge = read_judge(judged);
  ASSERT_FALSE(judge.empty()) << "llvm-readobj-19 listed no function";
  ASSERT_EQ(map.functions().size(), judge.size());
  for (size_t i = 0; i < judge.size(); ++i) {
    const BbFunction& ours = map.functions()[i];
    const JudgeFunction& theirs = judge[i];
    SCOPED_TRACE(::testing::Message()
                 << "function " << i << " at 0x" << std::hex << theirs.address);
    EXPECT_EQ(ours.address(), theirs.address);
    ASSERT_EQ(ours.ranges.size(), theirs.ranges.size());
    for (size_t r = 0; r < ours.ranges.size(); ++r) {
      EXPECT_EQ(ours.ranges[r].address, theirs.ranges[r].address);
      const auto& a = ours.ranges[r].blocks;
      const auto& b = theirs.ranges[r].blocks;
      ASSERT_EQ(a.size(), b.size()) << "range " << r;
      for (size_t k = 0; k < a.size(); ++k) {
        EXPECT_EQ(describe(a[k]), describe(b[k])) << "range " << r << " block " << k;
        counts.eh_pads += a[k].is_eh_pad;
        counts.indirect += a[k].has_indirect_branch;
        counts.tail_calls += a[k].has_tail_call;
      }
      counts.blocks += a.size();
    }
    EXPECT_EQ(ours.features.has_pgo(), theirs.pgo);
    EXPECT_EQ(ours.entry_count, theirs.entry_count);
    ASSERT_EQ(ours.pgo_blocks.size(), theirs.pgo_blocks.size());
    for (size_t k = 0; k < ours.pgo_blocks.size(); ++k) {
      const BbPgoBlock& a = ours.pgo_blocks[k];
      const BbPgoBlock& b = theirs.pgo_blocks[k];
      EXPECT_EQ(a.frequency, b.frequency) << "PGO block " << k;
      ASSERT_EQ(a.successors.size(), b.successors.size()) << "PGO block " << k;
      for (size_t s = 0; s < a.successors.size(); ++s) {
        EXPECT_EQ(a.successors[s].id, b.successors[s].id);
        EXPECT_EQ(a.successors[s].probability, b.successors[s].probability);
      }
      counts.successors += a.successors.size();
    }
    counts.functions += 1;
    counts.ranges += ours.ranges.size();
    counts.pgo_blocks += ours.pgo_blocks.size();
    counts.multi_range += ours.ranges.size() > 1;
    counts.entry_counted += ours.entry_count > 0;
  }
}

TEST_F(BbAddrMapVsLlvmReadobj, EveryFunctionRangeBlockAndPgoEntry) {
  Counts all;
  std::vector<std::string> names = {
      "blocks",         "blocks_all", "blocks_list",  "blocks_pgo", "blocks_pgo_all",
      "blocks_profile", "eh",         "libblocks.so", "versions",   "versions_be32"};
  if (fs::exists(fixture("bare32")))
    names.push_back("bare32");
  else
    std::cout << "[ NOTE     ] no i386 program (clang-19 -m32 could not build one here)\n";
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    Counts counts;
    const BbAddrMap map = BbAddrMap::load(*ElfBinary::open(fixture(name)));
    compare(map, read_file(fixture(name + ".readobj")), counts);
    std::cout << "[ JUDGED   ] " << name << ": " << counts.functions << " functions, "
              << counts.ranges << " ranges, " << counts.blocks << " blocks, " << counts.pgo_blocks
              << " PGO blocks, " << counts.successors << " successors\n";
    all.functions += counts.functions;
    all.ranges += counts.ranges;
    all.blocks += counts.blocks;
    all.pgo_blocks += counts.pgo_blocks;
    all.successors += counts.successors;
    all.multi_range += counts.multi_range;
    all.eh_pads += counts.eh_pads;
    all.indirect += counts.indirect;
    all.tail_calls += counts.tail_calls;
    all.entry_counted += counts.entry_counted;
  }
  std::cout << "[ JUDGED   ] in all: " << all.functions << " functions, " << all.ranges
            << " ranges, " << all.blocks << " blocks, " << all.pgo_blocks << " PGO blocks, "
            << all.successors << " successors\n";
  // What the comparison covered: none of these may be missing from the fixtures.
  EXPECT_GT(all.multi_range, 0u) << "functions of several ranges";
  EXPECT_GT(all.eh_pads, 0u);
  EXPECT_GT(all.indirect, 0u);
  EXPECT_GT(all.tail_calls, 0u);
  EXPECT_GT(all.entry_counted, 0u) << "functions with a profile's entry count";
  EXPECT_GT(all.successors, 0u);
}

// Every byte of every block is found in that block, every function at its entry, and every
// entry is a function symbol's start.
TEST_F(BbAddrMapBinaries, LookupsFindEveryBlock) {
  for (const char* name : {"blocks", "blocks_list", "blocks_pgo_all", "libblocks.so", "eh"}) {
    SCOPED_TRACE(name);
    const auto elf = ElfBinary::open(fixture(name));
    const BbAddrMap map = BbAddrMap::load(*elf);
    SymbolSearchOptions options;
    options.debug_dirs = {};
    const SymbolTable symbols = SymbolTable::load(*elf, options);
    for (const BbFunction& f : map.functions()) {
      EXPECT_EQ(map.function_at(f.address()), &f);
      const FunctionSymbol* symbol = symbols.find(f.address());
      ASSERT_NE(symbol, nullptr);
      EXPECT_EQ(symbol->addr, f.address()) << symbol->name;
      for (const BbRange& r : f.ranges) {
        for (const BbBlock& b : r.blocks) {
          for (uint64_t offset = b.offset; offset < b.end(); ++offset) {
            const BbLocation at = map.find(r.address + offset);
            ASSERT_EQ(at.block, &b) << "0x" << std::hex << r.address + offset;
            EXPECT_EQ(at.function, &f);
            EXPECT_EQ(at.range, &r);
          }
        }
      }
    }
  }
}

TEST_F(BbAddrMapBinaries, ABinaryWithoutTheSectionSaysHowToBuildIt) {
  const std::string path = fixture("nomap");
  try {
    BbAddrMap::load(*ElfBinary::open(path));
    FAIL() << "loaded a map";
  } catch (const BbAddrMapError& e) {
    EXPECT_EQ(e.kind(), Kind::NotBuiltWithAddressMap);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("-fbasic-block-address-map"), std::string::npos);
  }
}

TEST_F(BbAddrMapBinaries, ARelocatableObjectIsRefused) {
  const std::string path = fixture("blocks.o");
  try {
    BbAddrMap::load(*ElfBinary::open(path));
    FAIL() << "loaded a map";
  } catch (const BbAddrMapError& e) {
    EXPECT_EQ(e.kind(), Kind::Relocatable);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("relocat"), std::string::npos) << e.what();
  }
}

// ---- damaged copies ---------------------------------------------------------------------------

// The copies are written to a directory of the test, not into the fixture set, which every test
// process shares.
class BbAddrMapDamage : public BbAddrMapFixtureTest {
 protected:
  void SetUp() override {
    BbAddrMapFixtureTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // Every feature at once: several ranges and the PGO analysis map.
    original_ = fixture("blocks_pgo_all");
    copy_ = (scratch_ / "damaged").string();
    bytes_ = read_file(original_);
    const auto elf = ElfBinary::open(original_);
    ASSERT_TRUE(elf->is_64bit() && elf->little_endian());
    for (const ElfSection& s : elf->sections())
      if (s.type == kShtLlvmBbAddrMap) section_ = s;
    ASSERT_GT(section_.size, 0u);
  }

  // Loads the copy; the error, or nothing when it loaded.
  std::optional<BbAddrMapError> load_copy(const std::string& bytes) const {
    write_file(copy_, bytes);
    try {
      BbAddrMap::load(*ElfBinary::open(copy_));
    } catch (const BbAddrMapError& e) {
      return e;
    }
    return std::nullopt;
  }

  TempDir scratch_;
  std::string original_, copy_;
  std::string bytes_;  // the original's
  ElfSection section_;
};

void flip(char& byte) { byte = static_cast<char>(byte ^ 0xff); }

TEST_F(BbAddrMapDamage, AnUnknownVersionIsNamed) {
  std::string bytes = bytes_;
  bytes[section_.offset] = 3;  // the first function's version
  const auto error = load_copy(bytes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), Kind::Unsupported);
  EXPECT_EQ(error->section_offset(), 0u);
  const std::string what = error->what();
  EXPECT_NE(what.find(copy_), std::string::npos) << what;
  EXPECT_NE(what.find("version 3"), std::string::npos) << what;
}

TEST_F(BbAddrMapDamage, ASectionCutShortNamesTheFileAndTheByte) {
  // The section header says 3 bytes fewer: the last function's PGO data is cut.
  std::string bytes = bytes_;
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, bytes.data(), sizeof ehdr);
  const uint64_t at = ehdr.e_shoff + uint64_t{section_.index} * ehdr.e_shentsize;
  Elf64_Shdr shdr;
  std::memcpy(&shdr, bytes.data() + at, sizeof shdr);
  shdr.sh_size -= 3;
  std::memcpy(bytes.data() + at, &shdr, sizeof shdr);
  const auto error = load_copy(bytes);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), Kind::Malformed);
  EXPECT_LE(error->section_offset(), section_.size - 3);
  const std::string what = error->what();
  EXPECT_NE(what.find(copy_), std::string::npos) << what;
  EXPECT_NE(what.find("ends inside"), std::string::npos) << what;
  EXPECT_NE(what.find(".llvm_bb_addr_map"), std::string::npos) << what;
}

// Every byte of the section overwritten, one at a time, in a copy of the file: loaded or refused
// with the byte named, never anything else.
TEST_F(BbAddrMapDamage, EveryByteOfTheSectionOverwritten) {
  size_t loaded = 0, refused = 0;
  for (uint64_t i = 0; i < section_.size; ++i) {
    std::string bytes = bytes_;
    flip(bytes[section_.offset + i]);
    const auto error = load_copy(bytes);
    if (!error) {
      ++loaded;
      continue;
    }
    ++refused;
    EXPECT_NE(std::string(error->what()).find(copy_), std::string::npos) << error->what();
    EXPECT_LE(error->section_offset(), section_.size) << error->what();
  }
  std::cout << "[ DAMAGED  ] " << section_.size << " bytes flipped one at a time: " << loaded
            << " copies loaded, " << refused << " refused\n";
  EXPECT_GT(refused, 0u);
}

// The same damage judged: what llvm-readobj-19 refuses we refuse, what it reads we read as it
// does -- or refuse for one of the reasons this reader is stricter than LLVM (bb_addr_map.h).
// The judge runs with 256 MiB of address space (a shell's ulimit -v: run_command sets no limits)
// and 10 s: LLVM 19 believes a successor count without checking it against the bytes left, and a
// damaged one (2^49, say) has it loop and allocate until it runs out of memory ("LLVM ERROR: out
// of memory"). Where it gives up so, we must have refused that count. Every eighth byte, to keep the test to seconds (the judge is a
// process per copy).
TEST_F(BbAddrMapDamage, DamagedCopiesAreReadOrRefusedAsLlvmReadobjDoes) {
  if (!have_executable("llvm-readobj-19")) GTEST_SKIP() << "llvm-readobj-19 is not installed";
  const std::vector<std::string> argv = {
      "sh", "-c", "ulimit -v 262144; exec llvm-readobj-19 --bb-addr-map \"$1\"", "sh", copy_};
  RunOptions options;
  options.timeout = std::chrono::seconds(10);
  size_t both_read = 0, both_refused = 0, stricter = 0, judge_gave_up = 0;
  for (uint64_t i = 0; i < section_.size; i += 8) {
    SCOPED_TRACE(::testing::Message() << "byte " << i << " of the section flipped");
    std::string bytes = bytes_;
    flip(bytes[section_.offset + i]);
    const auto error = load_copy(bytes);
    const CommandResult judge = run_command(argv, options);
    ASSERT_NE(judge.exit_code, -1) << judge.describe(argv);
    const std::string& stderr_text = judge.err;
    const std::string what = error ? error->what() : "";
    if (judge.exit_code != 0) {
      EXPECT_NE(what.find("the number of successors"), std::string::npos)
          << "llvm-readobj-19 gave up ("
          << (judge.timed_out ? "timed out" : "exited " + std::to_string(judge.exit_code))
          << "): " << stderr_text.substr(0, 200) << "\nwe: " << (error ? what : "read it");
      ++judge_gave_up;
    } else if (stderr_text.find("unable to dump SHT_LLVM_BB_ADDR_MAP") != std::string::npos) {
      EXPECT_TRUE(error.has_value()) << "llvm-readobj-19: " << stderr_text;
      both_refused += error.has_value();
    } else if (error) {
      const bool known = what.find("4 GiB") != std::string::npos ||
                         what.find("passes 2^64") != std::string::npos ||
                         what.find("before the end of the one") != std::string::npos;
      EXPECT_TRUE(known) << "refused what llvm-readobj-19 reads: " << what;
      stricter += known;
    } else {
      Counts counts;
      compare(BbAddrMap::load(*ElfBinary::open(copy_)), judge.out, counts);
      ++both_read;
    }
  }
  std::cout << "[ DAMAGED  ] judged copies: " << both_read << " read by both, " << both_refused
            << " refused by both, " << stricter << " refused only here (stricter), "
            << judge_gave_up << " where llvm-readobj-19 ran out of memory or time\n";
  EXPECT_GT(both_read, 0u);
  EXPECT_GT(both_refused, 0u);
}

}  // namespace
}  // namespace profcollect::test
