// Attributes counts made in the kernel (the BPF engine's (tgid, ip) counts, drained once per
// interval) to binaries, through the one sample pipeline.
//
// A count has no time of its own: it is known only to have happened somewhere in its interval.
// The side-band records of the interval (MMAP2, COMM exec, FORK, EXIT) go through here into the
// pipeline, in time order, and each change of an address space is remembered: the mappings an
// MMAP2 or an exec replaced, and the mappings an MMAP2 brought. At the interval's end, a count
// whose address was covered during the interval by one mapping only (one file at one load
// base) is resolved against the address space as it is then; one whose address was covered by
// two (replaced, remapped by another file, or only by a mapping gone by the end: an exec's old
// image) is ambiguous: counted as such and never guessed. A new mapping over addresses nothing
// covered before is no change: the count can only be of it. An EXIT is applied only after the
// interval's counts, which may be of the process it ends; a pid reused within the interval makes
// every count of that pid ambiguous.
//
// Nothing here allocates per count; the interval's change lists keep their capacity.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "collector/pipeline/sample_pipeline.h"

namespace profcollect {

struct AttributionCounts {
  uint64_t ambiguous = 0;          // samples whose address changed mapping within their interval
  uint64_t ambiguous_entries = 0;  // the (tgid, address) pairs they came in
};

class IntervalAttribution {
 public:
  // One record of the current interval, in time order: through the pipeline (an EXIT waits for
  // end_interval()).
  void consume(SamplePipeline& pipeline, const Record& record);
  // `count` samples of process tgid at `ip` during the current interval, stamped `time` (the
  // interval's end, in the sample clock). Kernel addresses (the upper half) are the kernel's.
  void add_count(SamplePipeline& pipeline, uint32_t tgid, uint64_t ip, uint64_t count,
                 uint64_t time, uint32_t attr_index = 0);
  // Every count of the interval is in: the deferred exits are applied, the changes forgotten.
  void end_interval(SamplePipeline& pipeline);

  const AttributionCounts& counts() const { return counts_; }

  // Whether an address is a kernel one: the upper half of the address space on the 64-bit
  // architectures the engine runs on (x86-64, arm64).
  static bool is_kernel_address(uint64_t ip) { return ip >> 63; }

 private:
  // A mapping as the profile sees it: one file at one load base.
  struct Span {
    uint64_t start = 0, end = 0;
    uint32_t dso = 0;
    uint64_t base = 0;  // start - pgoff
  };
  struct Changes {
    std::vector<Span> spans;  // replaced and brought mappings, in the order met
    bool reused = false;      // the pid ended and a new process took it within the interval
  };
  enum class Verdict { Resolve, Ambiguous };
  Verdict judge(const SamplePipeline& pipeline, uint32_t tgid, uint64_t ip) const;
  Changes& changes_of(uint32_t tgid);
  void note_replaced(const SamplePipeline& pipeline, uint32_t tgid, uint64_t start, uint64_t end);

  std::unordered_map<uint32_t, Changes> changes_;
  std::vector<uint32_t> changed_;  // keys of changes_ with something this interval
  std::vector<TaskRecord> exits_;  // deferred to end_interval()
  std::vector<Mapping> scratch_;
  AttributionCounts counts_;
};

}  // namespace profcollect
