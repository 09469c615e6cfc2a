// The LLVM sample profile text format (../shared/reference/formats.md section 4), what
// `clang -fprofile-sample-use=FILE` reads and `llvm-profdata merge --sample` converts:
//
//     <name>:<total>:<head>
//      <offset>[.<discriminator>]: <count>[ <callee>:<calls>...]
//      <offset>[.<discriminator>]: <inlined callee>:<total>
//       ... the inlined callee's lines, one space deeper
//
// Functions are written by decreasing total (then name); lines and call sites by offset and
// discriminator; call targets by decreasing count (then name), as llvm-profgen writes them.
//
// The entry points below make the whole profile of one binary: from IP samples with
// llvm-profgen --leading-ip-only's rules, or from ranges and branches of branch samples with
// llvm-profgen --perfscript's rules (output/sample_profile_builder.h).
#pragma once

#include <cstdint>
#include <string>

#include "mapper/autofdo_binary.h"
#include "output/ip_profile.h"
#include "output/range_profile.h"
#include "output/render_stop.h"
#include "output/sample_profile.h"

namespace profcollect {

std::string write_sample_profile_text(const SampleProfile& profile);

struct AutofdoStats {
  uint64_t samples = 0;           // samples (or range/branch weight) given
  uint64_t samples_not_code = 0;  // IP samples at no instruction start of the binary's code
  uint64_t functions = 0;         // top-level functions in the profile
  uint64_t instructions = 0;      // instructions symbolized, sampled or zero-filled
  uint64_t unsymbolized_instructions = 0;  // of those, without any DWARF function
};

// IP samples: each sample counts its own instruction once; a line's count is the SUM over its
// instructions, totals count x instruction bytes. Samples that start no instruction of the
// binary's swept code (llvm-profgen's addressIsCode) are left out and counted in the stats.
std::string write_autofdo_from_ips(const IpProfile& ips, const AutofdoBinary& binary,
                                   AutofdoStats* stats = nullptr, const RenderStop* stop = nullptr);

// Branch samples, already counted into ranges and branches (output/branch_stack_counter.h).
std::string write_autofdo_from_ranges(const RangeProfile& ranges, const AutofdoBinary& binary,
                                      AutofdoStats* stats = nullptr,
                                      const RenderStop* stop = nullptr);

}  // namespace profcollect
