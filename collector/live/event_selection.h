// Which event samples, at what rate, and the perf_event_attr that asks the kernel for it.
//
// `-e auto` takes branch stacks first (Intel LBR, AMD LbrExtV2, Arm BRBE on cycles; else AMD BRS
// on raw 0xc4 with a fixed period), then hardware cycles, then cpu-clock (virtual machines),
// each found through sysfs and /proc/cpuinfo (CpuCapabilities) and confirmed by a trial
// perf_event_open; engine_note says which was taken and why. `-e lbr` and `-e brs` ask for one
// branch engine and fail with what was probed when the CPU lacks it. Kernel samples are left out when this process may not take
// them (perf_event_paranoid >= 2 without CAP_PERFMON), as perf's `:u` does.
//
// `-e rHEX[:MODIFIERS]` is perf's raw event (the core PMU's config, e.g. r20c4 = Intel's
// BR_INST_RETIRED.NEAR_TAKEN, r0c4 = AMD's RETIRED_TAKEN_BRANCH_INSTRUCTIONS) and `-b` / `-j
// any[,u][,k]` perf's branch stack request, so `profcollect -e r20c4:k -b -c 500009 -a` asks the
// kernel for exactly what `perf record` does with the same words. A raw event is not tried
// before the real open: where the PMU lacks it, that open fails and says so.
//
// make_sampling_attr() is pure: every field comes from its arguments, so tests check the attr
// field by field (tests/unit/event_selection_test.cpp) and against what perf record asks for
// (tests/integration/event_attr_vs_perf_test.cpp).
#pragma once

#include "collector/host/setting_error.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "collector/pipeline/collection_target.h"
#include "collector/live/cpu_capabilities.h"
#include "collector/host/perf_permissions.h"

namespace profcollect {

// Spe: the Arm SPE PMU (spe_pmu.h), collected live through its AUX area (spe_live_reader.h);
// refused with what was looked at where there is none. `auto` takes it on an Arm machine with
// SPE and no branch stack (BRBE), never elsewhere.
enum class EventRequest { Auto, Cycles, CpuClock, Lbr, Brs, Raw, Spe };

// An event's modifiers, as perf spells them after the colon. Only these are taken: u and k
// choose the privilege levels (exclude_kernel, exclude_user), p/pp/ppp the skid (precise_ip, raw
// events only); the rest of perf's (h, G, H, I, S, D, W, ...) are refused, as they change nothing
// a profile for BOLT or AutoFDO needs. `cycles` and `cpu-clock` take u and k.
struct EventModifiers {
  bool user = false;    // u
  bool kernel = false;  // k
  uint8_t precise = 0;  // number of p, 0..3
  // Whether u or k was given: the levels are then the ones named, as perf sets them.
  bool names_levels() const { return user || kernel; }
  bool operator==(const EventModifiers&) const = default;
};

// perf's -j: which branches fill the stack and at which privilege levels. Always `any` (every
// taken branch: what BOLT and AutoFDO need). With neither u nor k (perf's -b) the kernel records
// at the event's own levels.
struct BranchFilter {
  bool user = false;    // u
  bool kernel = false;  // k
  bool operator==(const BranchFilter&) const = default;
};

// What -e (and -b / -j) asked for.
struct EventSpec {
  EventRequest request = EventRequest::Auto;
  uint64_t raw_config = 0;               // Raw only
  std::string raw_hex;                   // Raw only: the digits as written, for the event's name
  EventModifiers modifiers;              // Raw, Cycles and CpuClock (u and k only for these two)
  std::optional<BranchFilter> branches;  // -b / -j; empty: the engine's own (or none)

  EventSpec() = default;
  EventSpec(EventRequest r) : request(r) {}  // NOLINT: a bare engine name is a whole spec
  bool operator==(const EventSpec&) const = default;
};

// What actually samples.
//   BranchStack  hardware cycles with a branch stack: Intel LBR / Arch LBR, AMD LbrExtV2, Arm BRBE
//   Brs          AMD Zen3 BRS: raw event 0xc4 (retired taken branches) with a 16-entry branch
//                stack; the kernel takes it only with a fixed period above 16, never freq
//   Raw          a raw event of the core PMU (PERF_TYPE_RAW), with a branch stack when asked
//   Spe          Arm SPE: sampled operations (PC, branch target, taken, mispredicted) written
//                into an AUX area, by a fixed interval only (spe_pmu.h)
enum class SamplingEngine { Cycles, CpuClock, BranchStack, Brs, Raw, Spe };

// AMD BRS's raw event: RETIRED_TAKEN_BRANCH_INSTRUCTIONS (sysfs alias `branch-brs`).
inline constexpr uint64_t kAmdBrsRawEvent = 0xc4;
// BRS's period when -c is not given: a prime, so sampling does not fall in step with a loop.
inline constexpr uint64_t kDefaultBrsPeriod = 100003;
// The kernel refuses a BRS period not above the 16 entries of the stack.
inline constexpr uint64_t kBrsMinimumPeriod = 17;

bool records_branch_stack(SamplingEngine engine);

// perf record's default frequency.
inline constexpr uint64_t kDefaultFrequencyHz = 4000;

struct SamplingRate {
  bool by_frequency = true;
  uint64_t value = kDefaultFrequencyHz;  // Hz, or events per sample
};

struct EventOptions {
  EventSpec event;                       // -e, -b, -j
  std::optional<uint64_t> frequency_hz;  // -F
  std::optional<uint64_t> period;        // -c
  // Kernel samples only (perf's `:k`, exclude_user), as kernel AutoFDO samples: refused when
  // this process may not take kernel samples.
  bool kernel_only = false;
};

// A request that cannot be met: unknown -e name, -F with -c, a zero rate.
class EventSelectionError : public SettingError {
 public:
  explicit EventSelectionError(const std::string& message) : SettingError(message) {}
};

// -e's "auto", "cycles[:u|k|uk]", "cpu-clock[:u|k|uk]", "lbr", "brs", "spe" or "rHEX[:MODIFIERS]",
// with the branch stack
// perf's -b (`any_branch`) or -j FILTER asks for; throws EventSelectionError for anything else
// (also for -b with -j), so a bad request is a usage error before anything starts.
EventSpec parse_event_request(std::string_view event, bool any_branch = false,
                              std::string_view branch_filter = {});

// perf's -j argument: "any" with optional "u" and "k", comma-separated, in any order.
BranchFilter parse_branch_filter(std::string_view text);

// The trial open: 0 when the kernel accepts the attr, else its errno.
using PerfOpenProbe = std::function<int(const perf_event_attr&)>;
// Opens the attr for this process on any CPU and closes it again.
int probe_perf_event_open(const perf_event_attr& attr);

struct SelectionContext {
  PerfPermissions permissions;
  uint64_t max_sample_rate = 100000;  // kernel.perf_event_max_sample_rate
  PerfOpenProbe probe = probe_perf_event_open;
  CpuCapabilities cpu;  // default: nothing probed, no branch hardware

  static SelectionContext of_this_process();
};

// kernel.perf_event_max_sample_rate, the highest frequency the kernel takes (perf's `-F max`);
// nullopt when it cannot be read.
std::optional<uint64_t> read_max_sample_rate();

struct EventSelection {
  SamplingEngine engine = SamplingEngine::CpuClock;
  BranchHardware branch_hardware = BranchHardware::None;  // what records the branch stack
  SamplingRate rate;
  bool include_kernel = false;
  bool kernel_only = false;  // exclude_user (named with `:k`)
  std::string name;          // as perf names it: "cycles", "cpu-clock:u", "r20c4:k"
  uint64_t raw_config = 0;   // Raw: the config
  // Raw: after the kernel rule (a bare raw event may become :u). Cycles, CpuClock and a branch
  // stack on cycles: the u and k asked (`cycles:u`), which then set the privilege bits as perf's.
  EventModifiers modifiers;
  std::optional<BranchFilter> branches;  // the branch request; empty: the engine's default
  SpePmu spe_pmu;                        // Spe: the PMU (its type and min_interval)
  // Spe with {branch_any} / {branch_filter}: SPE's branch filter, branch records only (every
  // record's taken branch becomes one edge; SPE has no branch stack of its own).
  bool spe_branches_only = false;
  bool spe_privileged = false;  // Spe: CAP_PERFMON, physical addresses and timestamps may be asked
  std::string
      engine_note;  // which event and why, in a line: "no hardware PMU (cycles: ENOENT), ..."
  std::string probe_note;   // empty, or what was probed for branch-stack hardware and not found
  std::string kernel_note;  // empty, or why kernel samples are left out
  std::string rate_note;    // empty, or why -F was lowered
};

// Decides the engine (probing for `auto`), the rate and the privilege level.
EventSelection select_event(const EventOptions& options, const SelectionContext& context);

// The sampling attr for a selection and target:
//   type/config      the engine; freq + sample_freq, or sample_period
//   sample_type      IP|TID|TIME|CPU|PERIOD|IDENTIFIER, + BRANCH_STACK for branch engines
//                    (IDENTIFIER: first word of every sample
//                    and last of every trailer, so records are attributed without parsing)
//   side-band        mmap, mmap2, comm, comm_exec, task, sample_id_all, build_id (`with_build_id`;
//                    Linux 5.12+), mmap_data = 0 (executable mappings only)
//   privilege        exclude_kernel and exclude_hv unless include_kernel; exclude_guest;
//                    exclude_user when kernel_only.
//                    Raw, and cycles/cpu-clock with u or k: as perf's modifiers (u:
//                    exclude_kernel|hv|guest, k: exclude_user|hv, uk: exclude_hv|guest),
//                    precise_ip from p
//   branches         branch_sample_type ANY|USER[|KERNEL] for branch engines (perf's -j any,u[,k]);
//                    `branches` when set: ANY plus its u/k (perf's -b: ANY alone)
//   Spe              make_spe_attr()'s type, config and interval (no PERIOD in sample_type), with
//                    the side-band bits above
//   start            disabled; inherit unless system-wide (new threads and children follow);
//                    enable_on_exec in command mode
perf_event_attr make_sampling_attr(const EventSelection& selection, TargetKind target,
                                   bool with_build_id = true);

// The attr used for the `auto` trial of an engine.
perf_event_attr make_probe_attr(SamplingEngine engine, const SamplingRate& rate,
                                bool include_kernel,
                                const std::optional<BranchFilter>& branches = std::nullopt);

std::string_view engine_event_name(SamplingEngine engine);

}  // namespace profcollect
