// FdataWriter: the no_lbr text BOLT reads (formats.md section 1).
#include "output/fdata_writer.h"

#include <gtest/gtest.h>

namespace profcollect {
namespace {

TEST(FdataWriter, NoLbrHeaderAndLinesSortedByNameThenOffset) {
  FunctionSymbol main_fn{0x1000, 0x40, "main", "main", false, false};
  FunctionSymbol other{0x2000, 0x40, "other/1", "other", true, false};
  FunctionProfile p;
  p.samples = {{&main_fn, 0x41, 2}, {&main_fn, 0x3, 5}, {&other, 0x2c, 71510}};
  EXPECT_EQ(FdataWriter::no_lbr(p, {"cpu-clock"}),
            "no_lbr cpu-clock:\n"
            "1 main 3 5\n"
            "1 main 41 2\n"
            "1 other/1 2c 71510\n");
}

TEST(FdataWriter, EventNamesKeepAnExistingColon) {
  FunctionProfile p;
  EXPECT_EQ(FdataWriter::no_lbr(p, {"cycles:u", "cpu-clock"}), "no_lbr cycles:u: cpu-clock:\n");
}

TEST(FdataWriter, EscapesSpacesAndBackslashes) {
  EXPECT_EQ(FdataWriter::escape_name("operator new(unsigned long)"),
            "operator\\ new(unsigned\\ long)");
  EXPECT_EQ(FdataWriter::escape_name("a\\b"), "a\\\\b");
}

}  // namespace
}  // namespace profcollect
