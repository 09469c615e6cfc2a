// The deterministic address rule (reference: collection.md, "Address -> ELF address"):
// file offset -> the PF_X PT_LOAD whose [p_offset rounded down to the page, p_offset + p_filesz)
// holds it -> offset - p_offset + p_vaddr. The layouts are the program headers of real links
// (readelf -lW), the expected values worked out from the rule by hand.
#include "mapper/exec_segment_map.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace profcollect {
namespace {

constexpr uint32_t R = 4, W = 2, X = 1;

LoadSegment load(uint64_t offset, uint64_t vaddr, uint64_t filesz, uint64_t memsz, uint32_t flags,
                 uint64_t align = 0x1000) {
  LoadSegment s;
  s.offset = offset;
  s.vaddr = vaddr;
  s.filesz = filesz;
  s.memsz = memsz;
  s.flags = flags;
  s.align = align;
  return s;
}

// gcc 12 + GNU ld 2.40 PIE (-z separate-code): every segment starts a page.
const std::vector<LoadSegment> kGccPie = {
    load(0x000000, 0x0000, 0x650, 0x650, R),
    load(0x001000, 0x1000, 0x2cd, 0x2cd, R | X),
    load(0x002000, 0x2000, 0x20c, 0x20c, R),
    load(0x002dd0, 0x3dd0, 0x250, 0x258, R | W),
};

// gcc non-PIE executable linked at 0x400000.
const std::vector<LoadSegment> kGccExec = {
    load(0x000000, 0x400000, 0x4f8, 0x4f8, R),
    load(0x001000, 0x401000, 0x1a5, 0x1a5, R | X),
    load(0x002000, 0x402000, 0x0fc, 0x0fc, R),
    load(0x002e10, 0x403e10, 0x220, 0x228, R | W),
};

// clang-19 + ld.lld-19 PIE: four PT_LOADs inside the first page of file offsets.
const std::vector<LoadSegment> kLldPacked = {
    load(0x000000, 0x0000, 0x77c, 0x77c, R),
    load(0x000780, 0x1780, 0x460, 0x460, R | X),
    load(0x000be0, 0x2be0, 0x1d8, 0x420, R | W),
    load(0x000db8, 0x3db8, 0x040, 0x041, R | W),
};

// The same link with -z max-page-size=0x10000 (AArch64's usual granule).
const std::vector<LoadSegment> kLld64k = {
    load(0x000000, 0x00000, 0x77c, 0x77c, R, 0x10000),
    load(0x000780, 0x10780, 0x460, 0x460, R | X, 0x10000),
    load(0x000be0, 0x20be0, 0x1d8, 0x420, R | W, 0x10000),
    load(0x000db8, 0x30db8, 0x040, 0x041, R | W, 0x10000),
};

// Two executable segments (e.g. a linker script with a separate hot text segment).
const std::vector<LoadSegment> kTwoText = {
    load(0x000000, 0x00000, 0x400, 0x400, R),
    load(0x001000, 0x01000, 0x800, 0x800, R | X),
    load(0x001900, 0x11900, 0x300, 0x300, R | X),
};

struct Case {
  std::string name;
  const std::vector<LoadSegment>* layout;
  uint64_t page_size;
  uint64_t file_offset;
  std::optional<uint64_t> vaddr;
};

class FileOffsetToVaddr : public ::testing::TestWithParam<Case> {};

TEST_P(FileOffsetToVaddr, FollowsTheRule) {
  const Case& c = GetParam();
  ExecSegmentMap map(*c.layout, c.page_size);
  EXPECT_EQ(map.file_offset_to_vaddr(c.file_offset), c.vaddr);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, FileOffsetToVaddr,
    ::testing::Values(
        Case{"gcc_text_start", &kGccPie, 0x1000, 0x1000, 0x1000},
        Case{"gcc_text_last_byte", &kGccPie, 0x1000, 0x12cc, 0x12cc},
        Case{"gcc_past_text", &kGccPie, 0x1000, 0x12cd, std::nullopt},
        Case{"gcc_headers_not_exec", &kGccPie, 0x1000, 0x0040, std::nullopt},
        Case{"gcc_rodata_not_exec", &kGccPie, 0x1000, 0x2010, std::nullopt},
        Case{"gcc_data_not_exec", &kGccPie, 0x1000, 0x2dd8, std::nullopt},
        Case{"exec_text", &kGccExec, 0x1000, 0x1040, 0x401040},
        Case{"exec_rodata", &kGccExec, 0x1000, 0x2040, std::nullopt},
        // lld: the text segment's bytes start mid-page; the vaddr is 0x1000 above the offset.
        Case{"lld_text_start", &kLldPacked, 0x1000, 0x780, 0x1780},
        Case{"lld_text_inside", &kLldPacked, 0x1000, 0x9a3, 0x19a3},
        Case{"lld_text_last_byte", &kLldPacked, 0x1000, 0xbdf, 0x1bdf},
        // .data.rel.ro right after text, in the same page: never an instruction address.
        Case{"lld_relro_not_exec", &kLldPacked, 0x1000, 0xbe0, std::nullopt},
        Case{"lld_data_not_exec", &kLldPacked, 0x1000, 0xdc0, std::nullopt},
        // Below p_offset in the text segment's first page: mapped executable along with it.
        Case{"lld_same_page_below_text", &kLldPacked, 0x1000, 0x700, 0x1700},
        Case{"lld_next_page", &kLldPacked, 0x1000, 0x1000, std::nullopt},
        Case{"lld64k_text_start", &kLld64k, 0x1000, 0x780, 0x10780},
        Case{"lld64k_text_inside", &kLld64k, 0x1000, 0xa00, 0x10a00},
        Case{"lld64k_data_not_exec", &kLld64k, 0x1000, 0xc00, std::nullopt},
        Case{"lld64k_runtime_64k_pages", &kLld64k, 0x10000, 0xa00, 0x10a00},
        Case{"two_text_first", &kTwoText, 0x1000, 0x1100, 0x1100},
        // 0x1900 is in both segments' page-rounded ranges; only the second holds it as its own.
        Case{"two_text_second", &kTwoText, 0x1000, 0x1900, 0x11900},
        Case{"two_text_second_end", &kTwoText, 0x1000, 0x1bff, 0x11bff},
        Case{"two_text_past_end", &kTwoText, 0x1000, 0x1c00, std::nullopt}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(ExecSegmentMap, VaddrToFileOffsetIsTheInverse) {
  for (const auto* layout : {&kGccPie, &kGccExec, &kLldPacked, &kLld64k, &kTwoText}) {
    ExecSegmentMap map(*layout);
    for (const LoadSegment& seg : *layout) {
      if (!seg.executable()) continue;
      for (uint64_t off = seg.offset; off < seg.offset + seg.filesz; off += 7) {
        const std::optional<uint64_t> vaddr = map.file_offset_to_vaddr(off);
        ASSERT_TRUE(vaddr.has_value()) << std::hex << off;
        EXPECT_EQ(*vaddr, off - seg.offset + seg.vaddr);
        EXPECT_EQ(map.vaddr_to_file_offset(*vaddr), off);
      }
    }
  }
}

TEST(ExecSegmentMap, VaddrOutsideExecutableSegments) {
  ExecSegmentMap map(kLldPacked);
  EXPECT_EQ(map.vaddr_to_file_offset(0x0100), std::nullopt);  // R segment
  EXPECT_EQ(map.vaddr_to_file_offset(0x177f), std::nullopt);  // just below text
  EXPECT_EQ(map.vaddr_to_file_offset(0x1be0), std::nullopt);  // just past text
  EXPECT_EQ(map.vaddr_to_file_offset(0x2be0), std::nullopt);  // data
}

TEST(ExecSegmentMap, EmptyAndDegenerateInputs) {
  ExecSegmentMap none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.file_offset_to_vaddr(0x1000), std::nullopt);

  ExecSegmentMap data_only(
      {load(0, 0, 0x1000, 0x1000, R), load(0x1000, 0x1000, 0x10, 0x10, R | W)});
  EXPECT_TRUE(data_only.empty());

  // An executable PT_LOAD with no file bytes maps no offset.
  ExecSegmentMap bss_text({load(0x1000, 0x1000, 0, 0x100, R | X)});
  EXPECT_TRUE(bss_text.empty());

  // A page size that is not a power of two: no rounding at all, exact ranges only.
  ExecSegmentMap odd(kLldPacked, 3000);
  EXPECT_EQ(odd.file_offset_to_vaddr(0x780), 0x1780u);
  EXPECT_EQ(odd.file_offset_to_vaddr(0x700), std::nullopt);
}

}  // namespace
}  // namespace profcollect
