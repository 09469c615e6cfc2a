// The event of a kernel profile, as the kernel's AutoFDO recipe (Documentation/dev-tools/
// autofdo.rst) samples: branch stacks on retired taken branches in the kernel with a prime period
// -- Intel BR_INST_RETIRED.NEAR_TAKEN (raw 0x20c4), AMD RETIRED_TAKEN_BRANCH_INSTRUCTIONS (raw
// 0xc4, Zen3 BRS or Zen4 LbrExtV2) -- where the CPU records branch stacks; else kernel cycles;
// else kernel cpu-clock IP samples (virtual machines). Always kernel-only (exclude_user) and
// confirmed by a trial open; the selection's engine_note says which was taken and why.
#pragma once

#include <cstdint>
#include <optional>

#include "collector/live/event_selection.h"

namespace profcollect {

// The recipe's period for retired taken branches: a prime, so sampling never falls in step with
// a loop.
inline constexpr uint64_t kKernelBranchPeriod = 500009;
inline constexpr uint64_t kIntelNearTakenRawEvent = 0x20c4;

struct KernelEventOptions {
  std::optional<uint64_t> frequency_hz;  // for cycles / cpu-clock
  std::optional<uint64_t> period;        // replaces the recipe's period
};

// Throws EventSelectionError when kernel samples may not be taken.
EventSelection select_kernel_event(const KernelEventOptions& options,
                                   const SelectionContext& context);

}  // namespace profcollect
