#include "collector/kernel/kernel_event_choice.h"

#include <linux/perf_event.h>

#include "collector/host/errno_name.h"
#include "record/hex_text.h"

namespace profcollect {

namespace {

// The raw taken-branch event for this CPU's branch stack, if the recipe has one for it.
std::optional<uint64_t> taken_branch_event(const CpuCapabilities& cpu) {
  if (cpu.vendor == "GenuineIntel" && (cpu.branch_stack == BranchHardware::IntelLbr ||
                                       cpu.branch_stack == BranchHardware::IntelArchLbr))
    return kIntelNearTakenRawEvent;
  if (cpu.vendor == "AuthenticAMD" && (cpu.brs || cpu.branch_stack == BranchHardware::AmdLbrV2))
    return kAmdBrsRawEvent;
  return std::nullopt;
}

}  // namespace

EventSelection select_kernel_event(const KernelEventOptions& options,
                                   const SelectionContext& context) {
  std::string why_not;
  if (const std::optional<uint64_t> raw = taken_branch_event(context.cpu)) {
    EventOptions eo;
    eo.event.request = EventRequest::Raw;
    eo.event.raw_config = *raw;
    eo.event.raw_hex = hex_digits(*raw);
    eo.event.modifiers.kernel = true;
    eo.event.branches = BranchFilter{};  // perf's -b: the event's own level, the kernel
    eo.period = options.period.value_or(kKernelBranchPeriod);
    eo.kernel_only = true;
    EventSelection s = select_event(eo, context);
    // A raw event is not probed by select_event: try it here, so a refusal falls back.
    perf_event_attr attr = make_sampling_attr(s, TargetKind::SystemWide, false);
    const int err = context.probe(attr);
    if (err == 0) {
      s.engine_note = std::string(branch_hardware_name(s.branch_hardware)) +
                      " found: sampling kernel branch stacks on retired taken branches (raw 0x" +
                      hex_digits(*raw) + ") every " + std::to_string(s.rate.value) +
                      ", as the kernel's AutoFDO recipe";
      return s;
    }
    why_not =
        "raw 0x" + hex_digits(*raw) + " with a branch stack refused (" + errno_name(err) + "); ";
  } else {
    // What was probed is long (every PMU): in the summary (kernel.json), not in the line.
    why_not = "no branch stack the kernel's AutoFDO recipe samples (LBR, BRS); ";
  }
  const std::string probed =
      context.cpu.probed.empty() ? std::string() : context.cpu.describe_probe();
  // Cycles, else cpu-clock: `auto` without branch hardware.
  SelectionContext plain = context;
  plain.cpu.branch_stack = BranchHardware::None;
  plain.cpu.brs = false;
  plain.cpu.probed.clear();
  EventOptions eo;
  eo.event.request = EventRequest::Auto;
  eo.frequency_hz = options.frequency_hz;
  eo.period = options.period;
  eo.kernel_only = true;
  EventSelection s = select_event(eo, plain);
  s.engine_note = why_not + s.engine_note + ", kernel only";
  s.probe_note = probed;
  return s;
}

}  // namespace profcollect
