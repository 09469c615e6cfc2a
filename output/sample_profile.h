// An LLVM sample profile in memory (llvm/ProfileData/SampleProf.h's FunctionSamples, reduced to
// what a line-number AutoFDO profile holds): per function its total and head samples, a count
// per (line offset, discriminator) with the calls seen there, and the profiles of the functions
// inlined at each call site, nested.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace profcollect {

struct LineLocation {
  uint32_t offset = 0;         // source line - the function's DW_AT_decl_line, 16 bits
  uint32_t discriminator = 0;  // base discriminator (or flow-sensitive value)
  auto operator<=>(const LineLocation&) const = default;
};

struct BodySample {
  uint64_t count = 0;
  std::map<std::string, uint64_t, std::less<>> call_targets;  // callee -> calls
};

struct FunctionSamples {
  uint64_t total = 0;  // samples x instruction bytes over the function and what it inlined
  uint64_t head = 0;   // calls into it (top level only)
  std::map<LineLocation, BodySample> body;
  std::map<LineLocation, std::map<std::string, FunctionSamples, std::less<>>> inlinees;
};

// Top-level functions by name.
using SampleProfile = std::map<std::string, FunctionSamples, std::less<>>;

}  // namespace profcollect
