#include "collector/event_selection.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "collector/errno_name.h"
#include "collector/proc_files.h"

namespace profcollect {

namespace {

void set_engine(perf_event_attr& attr, SamplingEngine engine) {
  switch (engine) {
    case SamplingEngine::Cycles:
      attr.type = PERF_TYPE_HARDWARE;
      attr.config = PERF_COUNT_HW_CPU_CYCLES;
      break;
    case SamplingEngine::CpuClock:
      attr.type = PERF_TYPE_SOFTWARE;
      attr.config = PERF_COUNT_SW_CPU_CLOCK;
      break;
    case SamplingEngine::BranchStack:
      // LBR, LbrExtV2 and BRBE record branches beside any event; cycles spreads the samples
      // over time as IP sampling does.
      attr.type = PERF_TYPE_HARDWARE;
      attr.config = PERF_COUNT_HW_CPU_CYCLES;
      break;
    case SamplingEngine::Brs:
      // PERF_TYPE_RAW goes to the core PMU, which on AMD is where BRS lives.
      attr.type = PERF_TYPE_RAW;
      attr.config = kAmdBrsRawEvent;
      break;
  }
}

// perf's `-j any,u[,k]`: every kind of taken branch, at the privilege levels sampled. HW_INDEX
// is not asked for, as perf record does not: the stack then starts at its newest entry.
void set_branches(perf_event_attr& attr, SamplingEngine engine, bool include_kernel) {
  if (!records_branch_stack(engine)) return;
  attr.sample_type |= PERF_SAMPLE_BRANCH_STACK;
  attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER |
                            (include_kernel ? PERF_SAMPLE_BRANCH_KERNEL : 0);
}

void set_rate(perf_event_attr& attr, const SamplingRate& rate) {
  if (rate.by_frequency) {
    attr.freq = 1;
    attr.sample_freq = rate.value;
  } else {
    attr.sample_period = rate.value;
  }
}

void set_privilege(perf_event_attr& attr, bool include_kernel) {
  // perf's `:u`: neither kernel nor hypervisor; guests are never profiled.
  attr.exclude_kernel = include_kernel ? 0 : 1;
  attr.exclude_hv = include_kernel ? 0 : 1;
  attr.exclude_guest = 1;
}

// Errors that mean "this machine has no such event", as opposed to "not allowed".
bool means_no_pmu(int err) { return err == ENOENT || err == EOPNOTSUPP || err == ENODEV; }

// BRS: a fixed period only (the kernel rejects freq for it), above the stack's 16 entries.
SamplingRate brs_rate(const EventOptions& o) {
  if (o.frequency_hz)
    throw EventSelectionError(
        "-e brs samples by a fixed period only: AMD BRS records the last 16 taken branches when "
        "the branch counter overflows, and the kernel refuses frequency mode for it (-F); use "
        "-c N (N >= " + std::to_string(kBrsMinimumPeriod) + ", default " +
        std::to_string(kDefaultBrsPeriod) + ")");
  SamplingRate rate{false, o.period.value_or(kDefaultBrsPeriod)};
  if (rate.value < kBrsMinimumPeriod)
    throw EventSelectionError("-c " + std::to_string(rate.value) +
                              ": AMD BRS needs a period of at least " +
                              std::to_string(kBrsMinimumPeriod) +
                              " (more than the 16 branches it records)");
  return rate;
}

std::string probe_summary(const CpuCapabilities& cpu) {
  return cpu.probed.empty() ? std::string("nothing probed") : cpu.describe_probe();
}

SamplingRate choose_rate(const EventOptions& o) {
  if (o.frequency_hz && o.period)
    throw EventSelectionError("-F (frequency) and -c (period) exclude each other");
  SamplingRate rate;
  if (o.period) {
    if (*o.period == 0) throw EventSelectionError("-c 0: the sample period must be at least 1");
    rate.by_frequency = false;
    rate.value = *o.period;
  } else if (o.frequency_hz) {
    if (*o.frequency_hz == 0) throw EventSelectionError("-F 0: the frequency must be at least 1 Hz");
    rate.value = *o.frequency_hz;
  }
  return rate;
}

}  // namespace

EventRequest parse_event_request(std::string_view name) {
  if (name == "auto") return EventRequest::Auto;
  if (name == "cycles") return EventRequest::Cycles;
  if (name == "cpu-clock") return EventRequest::CpuClock;
  if (name == "lbr") return EventRequest::Lbr;
  if (name == "brs") return EventRequest::Brs;
  throw EventSelectionError("unknown event \"" + std::string(name) +
                            "\": -e takes auto, lbr, brs, cycles or cpu-clock");
}

std::string_view engine_event_name(SamplingEngine engine) {
  switch (engine) {
    case SamplingEngine::Cycles:
      return "cycles";
    case SamplingEngine::CpuClock:
      return "cpu-clock";
    case SamplingEngine::BranchStack:
      return "cycles";  // perf's name for the event; the branch stack is an attr of it
    case SamplingEngine::Brs:
      return "r0c4";  // as perf names the raw event
  }
  return "?";
}

bool records_branch_stack(SamplingEngine engine) {
  return engine == SamplingEngine::BranchStack || engine == SamplingEngine::Brs;
}

int probe_perf_event_open(const perf_event_attr& attr) {
  perf_event_attr copy = attr;
  const long fd = ::syscall(SYS_perf_event_open, &copy, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return errno;
  ::close(static_cast<int>(fd));
  return 0;
}

SelectionContext SelectionContext::of_this_process() {
  SelectionContext c;
  c.permissions = PerfPermissions::of_this_process();
  c.cpu = probe_cpu_capabilities(RealSystemFiles());
  std::string line;
  if (read_first_line("/proc/sys/kernel/perf_event_max_sample_rate", line) && !line.empty())
    c.max_sample_rate = std::strtoull(line.c_str(), nullptr, 10);
  return c;
}

perf_event_attr make_probe_attr(SamplingEngine engine, const SamplingRate& rate,
                                bool include_kernel) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  set_engine(attr, engine);
  set_rate(attr, rate);
  set_privilege(attr, include_kernel);
  attr.sample_type = PERF_SAMPLE_IP;
  // The kernel checks the branch request at open: the trial must carry it.
  set_branches(attr, engine, include_kernel);
  attr.disabled = 1;
  return attr;
}

EventSelection select_event(const EventOptions& options, const SelectionContext& context) {
  EventSelection s;
  s.rate = choose_rate(options);
  if (s.rate.by_frequency && context.max_sample_rate != 0 &&
      s.rate.value > context.max_sample_rate) {
    s.rate_note = "-F " + std::to_string(s.rate.value) + " lowered to " +
                  std::to_string(context.max_sample_rate) +
                  " Hz, the kernel's limit (kernel.perf_event_max_sample_rate)";
    s.rate.value = context.max_sample_rate;
  }

  const PerfPermissions& p = context.permissions;
  s.include_kernel = p.may_sample_kernel();
  if (!s.include_kernel)
    s.kernel_note = "kernel samples are left out: kernel.perf_event_paranoid is " +
                    std::to_string(p.paranoid) +
                    " and this process has neither CAP_PERFMON nor CAP_SYS_ADMIN (grant "
                    "CAP_PERFMON or set kernel.perf_event_paranoid to 1 to include them)";

  const CpuCapabilities& cpu = context.cpu;
  auto trial = [&](SamplingEngine engine, const SamplingRate& rate) {
    return context.probe(make_probe_attr(engine, rate, s.include_kernel));
  };
  switch (options.event) {
    case EventRequest::Cycles:
      s.engine = SamplingEngine::Cycles;
      s.engine_note = "sampling cycles (-e cycles)";
      break;
    case EventRequest::CpuClock:
      s.engine = SamplingEngine::CpuClock;
      s.engine_note = "sampling cpu-clock (-e cpu-clock)";
      break;
    case EventRequest::Lbr: {
      if (cpu.branch_stack == BranchHardware::None)
        throw EventSelectionError(
            "-e lbr: this CPU has no branch stack that samples on cycles (Intel LBR, AMD "
            "LbrExtV2, Arm BRBE); looked at: " + probe_summary(cpu) +
            (cpu.brs ? ". It has AMD BRS: use -e brs" : ". Use -e auto or -e cpu-clock"));
      const int err = trial(SamplingEngine::BranchStack, s.rate);
      if (err != 0)
        throw EventSelectionError(std::string("-e lbr: ") + branch_hardware_name(cpu.branch_stack) +
                                  " found (" + probe_summary(cpu) +
                                  ") but perf_event_open refused cycles with a branch stack (" +
                                  errno_name(err) + ")");
      s.engine = SamplingEngine::BranchStack;
      s.branch_hardware = cpu.branch_stack;
      s.engine_note = std::string("sampling cycles with ") +
                      branch_hardware_name(cpu.branch_stack) + " branch stacks (-e lbr)";
      break;
    }
    case EventRequest::Brs: {
      s.rate = brs_rate(options);
      if (!cpu.brs)
        throw EventSelectionError("-e brs: this CPU has no AMD BRS (Zen3's branch sampling); "
                                  "looked at: " + probe_summary(cpu) +
                                  (cpu.branch_stack != BranchHardware::None
                                       ? std::string(". It has ") +
                                             branch_hardware_name(cpu.branch_stack) +
                                             ": use -e lbr"
                                       : ". Use -e auto or -e cpu-clock"));
      const int err = trial(SamplingEngine::Brs, s.rate);
      if (err != 0)
        throw EventSelectionError("-e brs: AMD BRS found (" + probe_summary(cpu) +
                                  ") but perf_event_open refused raw event 0xc4 with a branch "
                                  "stack (" + errno_name(err) + ")");
      s.engine = SamplingEngine::Brs;
      s.branch_hardware = BranchHardware::AmdBrs;
      s.engine_note = "sampling AMD BRS branch stacks on retired taken branches (raw 0xc4), "
                      "every " + std::to_string(s.rate.value) + " (-e brs)";
      break;
    }
    case EventRequest::Auto: {
      // Branch stacks first, then cycles, then cpu-clock; the note keeps every refusal.
      std::string why_not;
      if (cpu.branch_stack != BranchHardware::None) {
        const int err = trial(SamplingEngine::BranchStack, s.rate);
        if (err == 0) {
          s.engine = SamplingEngine::BranchStack;
          s.branch_hardware = cpu.branch_stack;
          s.engine_note = std::string(branch_hardware_name(cpu.branch_stack)) +
                          " found, sampling cycles with branch stacks";
          break;
        }
        why_not = std::string(branch_hardware_name(cpu.branch_stack)) + " refused (" +
                  errno_name(err) + ")";
      } else if (cpu.brs && options.frequency_hz) {
        why_not = "AMD BRS not used: it samples by period only and -F was given";
      } else if (cpu.brs) {
        const SamplingRate rate = brs_rate(options);
        const int err = trial(SamplingEngine::Brs, rate);
        if (err == 0) {
          s.engine = SamplingEngine::Brs;
          s.branch_hardware = BranchHardware::AmdBrs;
          s.rate = rate;
          s.engine_note = "AMD BRS found, sampling branch stacks on retired taken branches "
                          "(raw 0xc4) every " + std::to_string(rate.value);
          break;
        }
        why_not = "AMD BRS refused (" + errno_name(err) + ")";
      } else if (!cpu.probed.empty()) {
        why_not = "no branch-stack hardware (" + cpu.describe_probe() + ")";
      }
      const std::string prefix = why_not.empty() ? "" : why_not + "; ";
      const int err = trial(SamplingEngine::Cycles, s.rate);
      if (err == 0) {
        s.engine = SamplingEngine::Cycles;
        s.engine_note = prefix + "hardware PMU found, sampling cycles (IP samples, no branch stacks)";
      } else {
        s.engine = SamplingEngine::CpuClock;
        s.engine_note = prefix +
                        (means_no_pmu(err) ? "no hardware PMU" : "cycles not usable") +
                        " (cycles: " + errno_name(err) +
                        "): falling back to IP sampling on cpu-clock";
      }
      break;
    }
  }
  s.name = std::string(engine_event_name(s.engine)) + (s.include_kernel ? "" : ":u");
  return s;
}

perf_event_attr make_sampling_attr(const EventSelection& selection, TargetKind target,
                                   bool with_build_id) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  set_engine(attr, selection.engine);
  set_rate(attr, selection.rate);
  set_privilege(attr, selection.include_kernel);

  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                     PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;
  set_branches(attr, selection.engine, selection.include_kernel);
  attr.sample_id_all = 1;
  // Side-band: mmap2 makes the kernel write MMAP2 (mmap too, as perf sets both); mmap_data
  // stays 0, so only executable mappings are reported.
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  attr.build_id = with_build_id ? 1 : 0;

  // Opened disabled: PerfEventSet enables once every buffer is mapped, or the exec does.
  attr.disabled = 1;
  attr.inherit = target == TargetKind::SystemWide ? 0 : 1;
  attr.enable_on_exec = target == TargetKind::Command ? 1 : 0;
  return attr;
}

}  // namespace profcollect
