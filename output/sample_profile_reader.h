// Reads an LLVM sample profile in text form (the format output/autofdo_writer.h writes, and
// llvm-profgen and `llvm-profdata merge --sample --text` write) back into a SampleProfile, so that
// the AutoFDO profiles of many hosts can be added up where the binary is not at hand.
// write_sample_profile_text() writes the result.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "output/sample_profile.h"

namespace profcollect {

// Line-number profiles only: a context-sensitive profile ("[main:1 @ foo]") or one with
// metadata lines ("!CFGChecksum") is refused, as is anything else the format does not allow.
// nullopt with `error` ("line N: ...") then. Functions given twice add up.
std::optional<SampleProfile> parse_sample_profile_text(std::string_view text, std::string* error);

// Adds `from` into `into` as llvm-profdata merges two profiles of one function: totals, head
// samples, line counts, call targets and inlined callees (recursively) add up.
void add_function_samples(FunctionSamples& into, const FunctionSamples& from);

}  // namespace profcollect
