// llvm-profgen's unsymbolized profile (../shared/reference/formats.md section 5): ranges and
// branches with no symbols, to be symbolized later where the debug info is
// (`llvm-profgen --unsymbolized-profile FILE --binary BIN`):
//
//     <number of ranges>
//     <first>-<last>:<count>        one per range, sorted by (first, last)
//     <number of branches>
//     <source>-><target>:<count>    one per branch, sorted by (source, target)
//
// Addresses are lowercase hex without "0x", as offsets from the binary's preferred base (the
// first executable PT_LOAD's address rounded down to 4 KiB). A branch end outside the binary is
// written as llvm-profgen writes its external address, wrapped around the base.
//
// Made from IP samples, every sample is the one-instruction range [ip, ip]; such a file must be
// read back with `--leading-ip-only` (SUM per line instead of MAX), so the caller records which
// kind it wrote (unsymbolized_kind_name) in the profile's meta.json.
#pragma once

#include <cstdint>
#include <string>

#include "output/range_profile.h"

namespace profcollect {

enum class UnsymbolizedKind { IpSamples, BranchRanges };

// "ip-samples" / "branch-ranges", and the llvm-profgen flags that read each kind back.
const char* unsymbolized_kind_name(UnsymbolizedKind kind);
const char* unsymbolized_profgen_flags(UnsymbolizedKind kind);

std::string write_unsymbolized_profile(const RangeProfile& profile, uint64_t preferred_base);

}  // namespace profcollect
