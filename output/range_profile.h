// What llvm-profgen aggregates before it symbolizes anything (its SampleCounter): how often each
// address range ran straight through, and how often each branch was taken, in ELF virtual
// addresses of one binary. IP samples become one-instruction ranges [ip, ip]. Branch samples
// give, per branch stack, the fall-through range between consecutive branches and every taken
// branch (output/branch_stack_counter.h). This is also what the unsymbolized profile stores.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "output/ip_profile.h"

namespace profcollect {

// A branch end outside the binary (llvm-profgen's ExternalAddr).
inline constexpr uint64_t kExternalAddress = UINT64_MAX;

struct RangeProfile {
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> ranges;    // [first, last] inclusive -> count
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> branches;  // (source, target) -> count

  bool empty() const { return ranges.empty() && branches.empty(); }
};

// Each sampled address as the range [ip, ip] with its sample count.
inline RangeProfile ranges_from_ips(const IpProfile& ips) {
  RangeProfile profile;
  for (const auto& [address, count] : ips.counts()) profile.ranges[{address, address}] += count;
  return profile;
}

}  // namespace profcollect
