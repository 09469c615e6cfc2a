// Address -> binary and ELF virtual address for one sample, by the deterministic rule: find the
// process's mapping, decide whether its file is the target binary, turn the address into a file
// offset and that into the vaddr of the executable segment holding it. Symbols are looked up
// later, once per distinct address, not per sample.
#pragma once

#include <cstdint>

#include "collector/record.h"
#include "mapper/binary_matcher.h"
#include "mapper/exec_segment_map.h"
#include "mapper/process_table.h"
#include "mapper/sample_outcome.h"

namespace profcollect {

struct ResolvedAddress {
  SampleOutcome outcome = SampleOutcome::NoMapping;
  uint64_t vaddr = 0;          // valid when outcome is Mapped
  const Mapping* mapping = nullptr;
};

class SampleResolver {
 public:
  SampleResolver(const ProcessTable& processes, BinaryMatcher& matcher,
                 const ExecSegmentMap& segments)
      : processes_(processes), matcher_(matcher), segments_(segments) {}

  ResolvedAddress resolve(uint32_t pid, uint64_t addr, CpuMode mode) const;

 private:
  const ProcessTable& processes_;
  BinaryMatcher& matcher_;
  const ExecSegmentMap& segments_;
};

}  // namespace profcollect
