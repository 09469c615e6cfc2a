// What DwarfSymbolizer keeps while symbolizing and after drop_caches(), on a real binary with
// DWARF (this test program, built with debug info): however many units a profile touches, only
// the last few keep their address map and line table, and an address symbolized again -- after
// its unit was let go, or after drop_caches() -- gets the same inline chain as the first time,
// from the answers kept (no unit read again) unless they were forgotten.
#include <gtest/gtest.h>

#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "mapper/autofdo_binary.h"
#include "tests/unit/self_executable.h"

namespace profcollect {
namespace {

struct Frame {
  std::string name;
  uint32_t decl_line, line, discriminator;
  bool operator==(const Frame&) const = default;
};

std::vector<Frame> copy(const InlineStack& stack) {
  std::vector<Frame> out;
  for (const InlineFrame& f : stack)
    out.push_back(Frame{std::string(f.name), f.decl_line, f.line, f.discriminator});
  return out;
}

TEST(DwarfSymbolizerRelease, FewUnitsStayDecodedAndAnswersDoNotChange) {
  std::unique_ptr<AutofdoBinary> binary;
  try {
    binary = AutofdoBinary::open(ElfBinary::open(self_path()));
  } catch (const std::exception& e) {
    GTEST_SKIP() << "this test program has no usable DWARF: " << e.what();
  }
  const DwarfSymbolizer& dwarf = binary->dwarf();
  // The first address of functions spread over the whole program: many units.
  std::vector<uint64_t> addresses;
  const auto& ranges = dwarf.functions().ranges();
  const size_t step = std::max<size_t>(1, ranges.size() / 200);
  size_t i = 0;
  for (const auto& [start, range] : ranges) {
    if (i++ % step == 0) addresses.push_back(start);
  }
  ASSERT_GT(dwarf.unit_count(), DwarfSymbolizer::kMaxDecodedUnits * 4) << "too few units to tell";

  std::map<uint64_t, std::vector<Frame>> first;
  size_t named = 0;
  for (uint64_t a : addresses) {
    first[a] = copy(dwarf.symbolize(a));
    if (!first[a].empty()) ++named;
    EXPECT_LE(dwarf.decoded_units(), DwarfSymbolizer::kMaxDecodedUnits);
  }
  ASSERT_GT(named, addresses.size() / 2) << "most function starts have an inline chain";

  // Kept: the same answers, and no unit is read for them.
  const DwarfSymbolizer::Counts before = dwarf.counts();
  binary->drop_caches();
  EXPECT_EQ(dwarf.cached_addresses(), first.size());
  EXPECT_EQ(dwarf.decoded_units(), 0u);
  for (uint64_t a : addresses) EXPECT_EQ(copy(dwarf.symbolize(a)), first[a]) << std::hex << a;
  EXPECT_EQ(dwarf.counts().unit_walks, before.unit_walks);
  EXPECT_EQ(dwarf.counts().addresses, before.addresses);
  EXPECT_EQ(dwarf.decoded_units(), 0u);

  binary->drop_caches(DwarfSymbolizer::Answers::Forget);
  EXPECT_EQ(dwarf.cached_addresses(), 0u);
  EXPECT_EQ(dwarf.decoded_units(), 0u);
  // In reverse order: every unit is decoded again, most after it was let go once more.
  for (auto it = addresses.rbegin(); it != addresses.rend(); ++it) {
    EXPECT_EQ(copy(dwarf.symbolize(*it)), first[*it]) << std::hex << *it;
  }
  EXPECT_LE(dwarf.decoded_units(), DwarfSymbolizer::kMaxDecodedUnits);
}

}  // namespace
}  // namespace profcollect
