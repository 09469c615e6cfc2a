// BOLT's pre-aggregated profile (formats.md section 3), what `perf2bolt --pa -p FILE BIN` and
// `llvm-bolt --pa -p FILE` read; BOLT disassembles the binary itself, so this is the lossless
// hand-over of a BranchProfile:
//
//   B <from> <to> <count> <mispredicts>   taken branch
//   F <start> <end> <count>               fall-through range
//   f <start> <end> <count>               fall-through range whose branch came from outside
//
// Addresses are ELF vaddrs in hex without 0x; an end outside the binary is written "X:<addr>"
// (BOLT 19 keeps that address for its "0 [unknown] <addr>" fdata ends). Only records BOLT 16
// and 19 both accept are written. Lines come in the profile's (sorted) order.
#pragma once

#include <string>

#include "output/branch_profile.h"

namespace profcollect {

class PreaggWriter {
 public:
  static std::string write(const BranchProfile& profile);
};

}  // namespace profcollect
