// IP samples attributed to functions: (function, offset) -> count, plus what fell in no
// function. Built once per flush from an IpProfile and the binary's SymbolTable; shared by the
// fdata writer and the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mapper/symbol_table.h"
#include "output/ip_profile.h"

namespace profcollect {

struct FunctionSample {
  const FunctionSymbol* function;
  uint64_t offset;
  uint64_t count;
};

struct FunctionTotal {
  const FunctionSymbol* function;
  uint64_t count;
};

struct FunctionProfile {
  std::vector<FunctionSample> samples;  // sorted by function address, then offset
  uint64_t symbolized = 0;              // samples in some function
  uint64_t unsymbolized = 0;            // samples in the binary but in no function symbol

  static FunctionProfile build(const IpProfile& ips, const SymbolTable& symbols);
  // Per-function totals, largest first (ties by name), for reports.
  std::vector<FunctionTotal> totals() const;
};

}  // namespace profcollect
