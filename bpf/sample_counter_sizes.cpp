// The sizes of the sample counter's maps and what they cost in kernel memory.
#include <bpf/libbpf.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "bpf/sample_counter.h"

namespace profcollect {

namespace {

// A drain may come late (the owner busy with a flush), and a hash map's inserts slow down as it
// fills: room for a quarter more than an interval's worth, rounded up to a power of two (the
// kernel's bucket count is one anyway).
uint32_t entries_for(double keys_per_interval, uint32_t floor, uint32_t cap) {
  const double wanted = std::ceil(keys_per_interval * 1.25);
  if (!(wanted < static_cast<double>(cap))) return cap;  // also NaN
  return std::max(floor, std::bit_ceil(static_cast<uint32_t>(std::max(wanted, 1.0))));
}

// The kernel's preallocated hash map (kernel/bpf/hashtab.c, htab_map_mem_usage): a 16-byte
// bucket per power-of-two slot, and an element of a 48-byte header (struct htab_elem) plus key
// and value, each rounded up to 8 bytes, for every entry and one spare per possible CPU.
uint64_t hash_map_memory(uint64_t max_entries, uint64_t key_size, uint64_t value_size,
                         uint64_t cpus) {
  if (max_entries == 0) return 0;
  constexpr uint64_t kBucket = 16, kElementHeader = 48, kLocksPerCpu = 8 * sizeof(int);
  const uint64_t element = kElementHeader + (key_size + 7) / 8 * 8 + (value_size + 7) / 8 * 8;
  return std::bit_ceil(max_entries) * kBucket + element * (max_entries + cpus) +
         kLocksPerCpu * cpus;
}

}  // namespace

SampleCounterSizes size_sample_counter(double samples_per_cpu_second, unsigned cpus,
                                       std::chrono::milliseconds drain_interval) {
  const double samples = samples_per_cpu_second * std::max(cpus, 1u) *
                         std::max<double>(drain_interval.count(), 1.0) / 1000.0;
  // Every sample of an interval may be a distinct ip in the worst case. The cap keeps a
  // generation of the map near 300 MB at most; beyond it a sample that finds the map full is
  // counted.
  SampleCounterSizes sizes{};
  sizes.ip_entries = entries_for(samples, 1024, 1u << 22);
  // Processes profiled at once by one collection (a --pid target with its children); -a counts
  // every process without the set.
  sizes.targets = 16384;
  return sizes;
}

uint64_t sample_counter_memory(const SampleCounterSizes& sizes) {
  const int possible = libbpf_num_possible_cpus();
  const uint64_t cpus = possible > 0 ? possible : 1;
  uint64_t total = hash_map_memory(sizes.targets, sizeof(uint32_t), sizeof(uint8_t), cpus);
  total +=
      2 * hash_map_memory(sizes.ip_entries, sizeof(profcollect_ip_key), sizeof(uint64_t), cpus);
  return total;
}

}  // namespace profcollect
