// IP samples of one binary, aggregated per ELF virtual address. The per-sample step is one hash
// increment; memory grows with the number of distinct sampled addresses, not with samples.
#pragma once

#include <cstdint>
#include <unordered_map>

namespace profcollect {

class IpProfile {
 public:
  void add(uint64_t vaddr, uint64_t count = 1) {
    counts_[vaddr] += count;
    total_ += count;
  }
  // Adds another profile of the same binary (cumulative profiles, several processes).
  void merge(const IpProfile& other) {
    for (const auto& [a, c] : other.counts_) add(a, c);
  }
  const std::unordered_map<uint64_t, uint64_t>& counts() const { return counts_; }
  uint64_t total() const { return total_; }
  bool empty() const { return total_ == 0; }

 private:
  std::unordered_map<uint64_t, uint64_t> counts_;
  uint64_t total_ = 0;
};

}  // namespace profcollect
