// The function index a second thread helps build (DwarfSymbolizer with threads = 2: the second
// half of the units walked through a handle of its own) is the one a single walk builds: the same
// functions, in the same order, with the same ranges, and every range start kept by the same
// function. Checked on a real binary with DWARF of many units: this test program.
#include <gtest/gtest.h>

#include <limits.h>
#include <unistd.h>

#include <string>
#include <tuple>
#include <vector>

#include "mapper/autofdo_binary.h"
#include "tests/unit/self_executable.h"

namespace profcollect {
namespace {

using Range = std::tuple<uint64_t, uint64_t, std::string>;

std::vector<Range> ranges_of(const DwarfFunctionIndex& index) {
  std::vector<Range> out;
  for (const auto& [begin, range] : index.ranges())
    out.emplace_back(range.begin, range.end, index.function(range.function).name);
  return out;
}

std::vector<Range> functions_of(const DwarfFunctionIndex& index) {
  std::vector<Range> out;
  for (const DwarfFunction& f : index.functions()) {
    for (const AddressRange& r : f.ranges) out.emplace_back(r.begin, r.end, f.name);
  }
  return out;
}

TEST(DwarfSymbolizerThreads, TwoThreadsIndexWhatOneDoes) {
  AutofdoBinaryOptions one, two;
  one.debug_dirs = two.debug_dirs = {};
  two.threads = 2;
  std::unique_ptr<AutofdoBinary> a, b;
  try {
    a = AutofdoBinary::open(ElfBinary::open(self_path()), one);
  } catch (const std::exception& e) {
    GTEST_SKIP() << "this test program has no usable DWARF: " << e.what();
  }
  b = AutofdoBinary::open(ElfBinary::open(self_path()), two);
  ASSERT_GT(a->dwarf().unit_count(), 8u) << "too few units to split";
  const DwarfFunctionIndex& x = a->dwarf().functions();
  const DwarfFunctionIndex& y = b->dwarf().functions();
  ASSERT_GT(x.functions().size(), 100u);
  EXPECT_EQ(functions_of(x), functions_of(y));
  EXPECT_EQ(ranges_of(x), ranges_of(y));
  // And the address maps built from the outer subprograms each walk recorded agree.
  size_t i = 0;
  for (const auto& [begin, range] : x.ranges()) {
    if (i++ % 97 != 0) continue;
    const InlineStack& p = a->dwarf().symbolize(begin + (range.end - begin) / 2);
    const InlineStack& q = b->dwarf().symbolize(begin + (range.end - begin) / 2);
    ASSERT_EQ(p.size(), q.size()) << std::hex << begin;
    for (size_t k = 0; k < p.size(); ++k) {
      EXPECT_EQ(p[k].name, q[k].name);
      EXPECT_EQ(p[k].line, q[k].line);
      EXPECT_EQ(p[k].decl_line, q[k].decl_line);
    }
  }
}

}  // namespace
}  // namespace profcollect
