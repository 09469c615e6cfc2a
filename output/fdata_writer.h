// BOLT fdata for IP samples ("no_lbr" mode), as perf2bolt -nl writes it and llvm-bolt -data=
// reads it:
//
//   no_lbr cpu-clock:
//   1 main 41 2
//   1 other/1 2c 71510
//
// First line: "no_lbr" and the event names, each with its trailing colon. Then one line per
// sampled (function, offset): "1 <name> <offset in hex, no 0x> <number of samples>". Names are
// BOLT's (SymbolTable); spaces and backslashes in them are escaped with a backslash. A profile
// translated through BAT (FunctionProfile::translated) begins with a line "boltedcollection" and
// names functions as perf2bolt does then (BoltedBinary::profile_name).
#pragma once

#include <string>
#include <vector>

#include "output/fdata_reader.h"
#include "output/function_profile.h"

namespace profcollect {

class FdataWriter {
 public:
  // Returns the whole file's text; lines are sorted by function name, then offset, so output is
  // deterministic.
  static std::string no_lbr(const FunctionProfile& profile, const std::vector<std::string>& events);
  // The same as data, for adding to a profile written before.
  static NoLbrFdata to_no_lbr(const FunctionProfile& profile,
                              const std::vector<std::string>& events);

  static std::string escape_name(const std::string& name);
};

}  // namespace profcollect
