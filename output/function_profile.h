// IP samples attributed to functions: (function, offset) -> count, plus what fell in no
// function. Built once per flush from an IpProfile and the binary's SymbolTable; shared by the
// fdata writer and the report. For a BOLTed binary with a readable BOLT address translation
// (mapper/bolted_binary.h) the samples are the input binary's: each is attributed to the
// function it was in before BOLT (a cold fragment's to the function it was split from) at its
// offset there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mapper/bolted_binary.h"
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

// What BOLT address translation did with the samples of a BOLTed binary.
struct TranslationCounts {
  uint64_t translated = 0;      // in a function BAT covers, taken to the input's offset
  uint64_t cold_fragments = 0;  // of those, in a cold fragment (named by the function split)
  uint64_t not_rewritten = 0;   // in a function BOLT left as it was: offset kept
};

struct FunctionProfile {
  std::vector<FunctionSample> samples;  // sorted by function address, then offset
  uint64_t symbolized = 0;              // samples in some function
  uint64_t unsymbolized = 0;            // samples in the binary but in no function symbol
  bool translated = false;              // the input binary's, through BAT
  TranslationCounts translation;        // when translated

  // `bolted`: what BOLT left in the binary; its table, when readable, translates the samples.
  static FunctionProfile build(const IpProfile& ips, const SymbolTable& symbols,
                               const BoltedBinary* bolted = nullptr);
  // Per-function totals, largest first (ties by name), for reports.
  std::vector<FunctionTotal> totals() const;
};

}  // namespace profcollect
