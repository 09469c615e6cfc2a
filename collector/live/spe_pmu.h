// Arm SPE PMUs as the kernel publishes them (drivers/perf/arm_spe_pmu.c): one event source
// `arm_spe_N` per set of CPUs under /sys/bus/event_source/devices, with its perf type in `type`
// and the smallest sampling interval it takes in `caps/min_interval`. An SPE event samples by
// period only (no frequency), writes its records to an AUX area (at least two pages), and takes
// its filters in config:
//   ts_enable:0  pa_enable:1  pct_enable:2  jitter:16  branch_filter:32  load_filter:33
//   store_filter:34; config1 an event filter, config2 a minimum latency.
// pa_enable (physical addresses) and pct_enable (physical timestamps) need CAP_PERFMON (or
// CAP_SYS_ADMIN): the kernel refuses them to others.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collector/live/cpu_capabilities.h"

namespace profcollect {

// The SPE PMUs of this machine, by name. `probed` gets what was looked at, for messages.
std::vector<SpePmu> find_spe_pmus(const SystemFiles& files,
                                  std::vector<std::string>* probed = nullptr);

inline constexpr uint64_t kSpeTsEnable = 1ULL << 0;
inline constexpr uint64_t kSpePaEnable = 1ULL << 1;
inline constexpr uint64_t kSpePctEnable = 1ULL << 2;
inline constexpr uint64_t kSpeJitter = 1ULL << 16;
inline constexpr uint64_t kSpeBranchFilter = 1ULL << 32;
inline constexpr uint64_t kSpeLoadFilter = 1ULL << 33;
inline constexpr uint64_t kSpeStoreFilter = 1ULL << 34;

// perf's default SPE interval when none is asked for and the PMU publishes none.
inline constexpr uint64_t kDefaultSpeInterval = 4096;

struct SpeAttrOptions {
  uint64_t period = 0;         // 0: the PMU's min_interval (kDefaultSpeInterval without one)
  bool branches_only = false;  // branch_filter: only branch records (branch profiles)
  bool privileged = false;     // CAP_PERFMON: physical addresses and timestamps may be asked
  bool include_kernel = false;
  bool system_wide = false;  // no inherit
};

// The SPE event's attr: timestamps and jitter always (records ordered with the side-band, no
// sampling in step with a loop), the period raised to min_interval, pa_enable/pct_enable only
// when privileged, sample_type IP|TID|TIME|CPU|IDENTIFIER with sample_id_all.
perf_event_attr make_spe_attr(const SpePmu& pmu, const SpeAttrOptions& options);

}  // namespace profcollect
