#include "collector/live/event_selection.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "collector/host/errno_name.h"
#include "collector/host/proc_files.h"
#include "collector/live/spe_pmu.h"

namespace profcollect {

namespace {

void set_engine(perf_event_attr& attr, SamplingEngine engine, uint64_t raw_config) {
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
    case SamplingEngine::Raw:
      // As perf's rHEX: the core PMU decodes config (Intel/AMD: event | umask << 8 | ...).
      attr.type = PERF_TYPE_RAW;
      attr.config = raw_config;
      break;
    case SamplingEngine::Spe:
      break;  // make_spe_attr() (spe_pmu.h): the PMU's own type and config
  }
}

// perf's `-j any,u[,k]`: every kind of taken branch, at the privilege levels sampled. HW_INDEX
// is not asked for, as perf record does not: the stack then starts at its newest entry.
// A filter given with -b / -j replaces the engine's: ANY and exactly the levels named, as perf
// sets it (none named: the kernel takes the event's levels).
void set_branches(perf_event_attr& attr, SamplingEngine engine, bool include_kernel,
                  const std::optional<BranchFilter>& filter) {
  if (filter) {
    attr.sample_type |= PERF_SAMPLE_BRANCH_STACK;
    attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY |
                              (filter->user ? PERF_SAMPLE_BRANCH_USER : 0) |
                              (filter->kernel ? PERF_SAMPLE_BRANCH_KERNEL : 0);
    return;
  }
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

// perf's modifiers on an event (a raw one, or cycles/cpu-clock with u or k). The first of u/k
// excludes every level, then each names one back; exclude_guest follows `u` only (perf's
// get_event_modifier: `k` alone samples guests' kernel too, which on a host without guests
// changes nothing). No u/k: every level, as perf.
void set_modifier_privilege(perf_event_attr& attr, const EventModifiers& m) {
  if (!m.user && !m.kernel) {
    attr.exclude_guest = 1;
  } else {
    attr.exclude_user = m.user ? 0 : 1;
    attr.exclude_kernel = m.kernel ? 0 : 1;
    attr.exclude_hv = 1;
    attr.exclude_guest = m.user ? 1 : 0;
  }
  attr.precise_ip = m.precise;
}

// Errors that mean "this machine has no such event", as opposed to "not allowed".
bool means_no_pmu(int err) { return err == ENOENT || err == EOPNOTSUPP || err == ENODEV; }

// BRS: a fixed period only (the kernel rejects freq for it), above the stack's 16 entries.
SamplingRate brs_rate(const EventOptions& o, const std::string& what = "{event} brs") {
  if (o.frequency_hz)
    throw EventSelectionError(
        what +
        " samples by a fixed period only: AMD BRS records the last 16 taken branches when "
        "the branch counter overflows, and the kernel refuses frequency mode for it ({frequency}); "
        "use "
        "{period} N (N >= " +
        std::to_string(kBrsMinimumPeriod) + ", default " + std::to_string(kDefaultBrsPeriod) + ")");
  SamplingRate rate{false, o.period.value_or(kDefaultBrsPeriod)};
  if (rate.value < kBrsMinimumPeriod)
    throw EventSelectionError(what + ": {period} " + std::to_string(rate.value) +
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
    throw EventSelectionError("{frequency} and {period} exclude each other");
  SamplingRate rate;
  if (o.period) {
    if (*o.period == 0)
      throw EventSelectionError("{period} 0: the sample period must be at least 1");
    rate.by_frequency = false;
    rate.value = *o.period;
  } else if (o.frequency_hz) {
    if (*o.frequency_hz == 0)
      throw EventSelectionError("{frequency} 0: the frequency must be at least 1 Hz");
    rate.value = *o.frequency_hz;
  }
  return rate;
}

// SPE samples by a fixed interval only, never below the PMU's min_interval.
SamplingRate spe_rate(const EventOptions& o, const SpePmu& pmu) {
  if (o.frequency_hz)
    throw EventSelectionError(
        "{event} spe samples by a fixed interval only: Arm SPE counts "
        "operations and the kernel takes no frequency for it ({frequency}); "
        "use {period} N (default and least: the PMU's min_interval, " +
        std::to_string(pmu.min_interval ? pmu.min_interval : kDefaultSpeInterval) + ")");
  if (o.period && *o.period == 0)
    throw EventSelectionError("{period} 0: the sample period must be at least 1");
  const uint64_t floor = pmu.min_interval ? pmu.min_interval : kDefaultSpeInterval;
  return SamplingRate{false, std::max(o.period.value_or(floor), floor)};
}

SpeAttrOptions spe_options(const EventSelection& s, TargetKind target) {
  SpeAttrOptions o;
  o.period = s.rate.value;
  o.privileged = s.spe_privileged;
  o.branches_only = s.spe_branches_only;
  o.include_kernel = s.include_kernel;
  o.system_wide = target == TargetKind::SystemWide;
  return o;
}

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// perf's rHEX[:MODIFIERS]: up to 16 hex digits of config (no 0x), then u, k, p, pp or ppp.
EventSpec parse_raw_event(std::string_view text) {
  const std::string quoted = "{event} " + std::string(text);
  const size_t colon = text.find(':');
  const std::string_view hex = text.substr(1, colon == std::string_view::npos ? colon : colon - 1);
  if (hex.empty() || hex.size() > 16 ||
      !std::all_of(hex.begin(), hex.end(), [](char c) { return is_hex_digit(c); }))
    throw EventSelectionError(quoted +
                              ": a raw event is r and 1 to 16 hex digits of the PMU's "
                              "config, without 0x (r20c4 = event 0xc4, umask 0x20)");
  EventSpec spec(EventRequest::Raw);
  spec.raw_hex = std::string(hex);
  spec.raw_config = std::strtoull(spec.raw_hex.c_str(), nullptr, 16);
  if (colon == std::string_view::npos) return spec;
  const std::string_view mods = text.substr(colon + 1);
  if (mods.empty())
    throw EventSelectionError(quoted + ": no modifier after ':' (u, k, p, pp or ppp)");
  for (char c : mods) {
    if (c == 'u') {
      spec.modifiers.user = true;
    } else if (c == 'k') {
      spec.modifiers.kernel = true;
    } else if (c == 'p') {
      if (++spec.modifiers.precise > 3)
        throw EventSelectionError(quoted + ": at most ppp (precise_ip is 0 to 3)");
    } else {
      throw EventSelectionError(quoted + ": modifier '" + std::string(1, c) +
                                "' is not taken; raw events take u (user), k (kernel) and p, pp "
                                "or ppp (precise)");
    }
  }
  return spec;
}

// perf's modifiers on cycles and cpu-clock: the privilege levels, u and k, in any order.
EventModifiers parse_level_modifiers(std::string_view text, std::string_view name,
                                     std::string_view mods) {
  const std::string quoted = "{event} " + std::string(text);
  if (mods.empty()) throw EventSelectionError(quoted + ": no modifier after ':' (u or k)");
  EventModifiers m;
  for (char c : mods) {
    if (c == 'u') {
      m.user = true;
    } else if (c == 'k') {
      m.kernel = true;
    } else {
      throw EventSelectionError(
          quoted + ": modifier '" + std::string(1, c) + "' is not taken; " + std::string(name) +
          " takes u (user) and k (kernel)" +
          (c == 'p' || c == 'P' ? "; precise sampling is asked on a raw event (rHEX:p)" : ""));
    }
  }
  return m;
}

std::string hex_of(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

// As perf names a raw event: its digits as written, then the modifiers: r0c4, r20c4:k, r20c4:upp.
std::string raw_event_name(const std::string& hex, const EventModifiers& m) {
  std::string mods =
      std::string(m.user ? "u" : "") + (m.kernel ? "k" : "") + std::string(m.precise, 'p');
  return "r" + hex + (mods.empty() ? "" : ":" + mods);
}

std::string branch_filter_text(const BranchFilter& f) {
  return std::string("{branch_filter} any") + (f.user ? ",u" : "") + (f.kernel ? ",k" : "");
}

}  // namespace

BranchFilter parse_branch_filter(std::string_view text) {
  BranchFilter f;
  bool any = false;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view word = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (word == "any")
      any = true;
    else if (word == "u")
      f.user = true;
    else if (word == "k")
      f.kernel = true;
    else
      throw EventSelectionError(
          "{branch_filter} " + std::string(text) + ": '" + std::string(word) +
          "' is not taken; {branch_filter} takes any[,u][,k] (every taken branch: what "
          "BOLT and AutoFDO need)");
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (!any)
    throw EventSelectionError("{branch_filter} " + std::string(text) +
                              ": name the branches: any[,u][,k]");
  return f;
}

EventSpec parse_event_request(std::string_view event, bool any_branch,
                              std::string_view branch_filter) {
  if (any_branch && !branch_filter.empty())
    throw EventSelectionError("{branch_any} and {branch_filter} exclude each other");
  EventSpec spec;
  const size_t colon = event.find(':');
  const std::string_view name = event.substr(0, colon);
  if (event.size() > 1 && event[0] == 'r' && name != "r")
    spec = parse_raw_event(event);
  else if (name == "cycles" || name == "cpu-clock") {
    spec = name == "cycles" ? EventRequest::Cycles : EventRequest::CpuClock;
    if (colon != std::string_view::npos)
      spec.modifiers = parse_level_modifiers(event, name, event.substr(colon + 1));
  } else if (colon != std::string_view::npos &&
             (name == "auto" || name == "lbr" || name == "brs" || name == "spe"))
    throw EventSelectionError(
        "{event} " + std::string(event) + ": " + std::string(name) +
        " takes no modifiers; cycles and cpu-clock take u and k (cycles:u), raw "
        "events u, k and p (r20c4:k)");
  else if (event == "auto")
    spec = EventRequest::Auto;
  else if (event == "lbr")
    spec = EventRequest::Lbr;
  else if (event == "brs")
    spec = EventRequest::Brs;
  else if (event == "spe")
    spec = EventRequest::Spe;
  else
    throw EventSelectionError(
        "unknown event \"" + std::string(event) +
        "\": {event} takes auto, lbr, brs, spe, cycles[:u|k], cpu-clock[:u|k] or a raw "
        "event rHEX[:u|k|p...] (e.g. r20c4:k); a branch stack is asked with {branch_any} or "
        "{branch_filter}");
  if (any_branch) spec.branches = BranchFilter{};
  if (!branch_filter.empty()) spec.branches = parse_branch_filter(branch_filter);
  return spec;
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
    case SamplingEngine::Raw:
      return "raw";  // the selection's name holds the config
    case SamplingEngine::Spe:
      return "arm_spe";  // the selection's name is the PMU's: "arm_spe_0//"
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

std::optional<uint64_t> read_max_sample_rate() {
  std::string line;
  if (!read_first_line("/proc/sys/kernel/perf_event_max_sample_rate", line) || line.empty() ||
      line.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::strtoull(line.c_str(), nullptr, 10);
}

SelectionContext SelectionContext::of_this_process() {
  SelectionContext c;
  c.permissions = PerfPermissions::of_this_process();
  c.cpu = probe_cpu_capabilities(RealSystemFiles());
  if (const std::optional<uint64_t> rate = read_max_sample_rate()) c.max_sample_rate = *rate;
  return c;
}

perf_event_attr make_probe_attr(SamplingEngine engine, const SamplingRate& rate,
                                bool include_kernel, const std::optional<BranchFilter>& branches) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  set_engine(attr, engine, 0);
  set_rate(attr, rate);
  set_privilege(attr, include_kernel);
  attr.sample_type = PERF_SAMPLE_IP;
  // The kernel checks the branch request at open: the trial must carry it.
  set_branches(attr, engine, include_kernel, branches);
  attr.disabled = 1;
  return attr;
}

EventSelection select_event(const EventOptions& options, const SelectionContext& context) {
  EventSelection s;
  s.rate = choose_rate(options);
  if (s.rate.by_frequency && context.max_sample_rate != 0 &&
      s.rate.value > context.max_sample_rate) {
    s.rate_note = "{frequency} " + std::to_string(s.rate.value) + " lowered to " +
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

  if (options.kernel_only && !s.include_kernel)
    throw EventSelectionError(
        "a kernel profile needs kernel samples, which this process may not take: "
        "kernel.perf_event_paranoid is " +
        std::to_string(p.paranoid) +
        " and this process has neither CAP_PERFMON nor CAP_SYS_ADMIN (grant "
        "CAP_PERFMON or set kernel.perf_event_paranoid to 1)");
  s.kernel_only = options.kernel_only;

  const CpuCapabilities& cpu = context.cpu;
  const EventSpec& spec = options.event;
  const std::string refusal_why = "kernel.perf_event_paranoid is " + std::to_string(p.paranoid) +
                                  " and this process has neither CAP_PERFMON nor CAP_SYS_ADMIN";
  if (spec.branches && spec.branches->kernel && !s.include_kernel)
    throw EventSelectionError(branch_filter_text(*spec.branches) +
                              " asks for kernel branches, which this process may not record: " +
                              refusal_why + " (drop ,k or grant CAP_PERFMON)");
  // -b / -j on cycles is perf's spelling of a branch stack on cycles: -e lbr with that filter.
  EventRequest request = spec.request;
  if (spec.branches) {
    if (request == EventRequest::Auto || request == EventRequest::CpuClock)
      throw EventSelectionError(
          std::string("{branch_any} / {branch_filter} ask for a branch stack, which {event} ") +
          (request == EventRequest::Auto ? "auto" : "cpu-clock") +
          " does not take: use {event} lbr, {event} brs, {event} cycles or a raw event (rHEX)");
    if (request == EventRequest::Cycles) request = EventRequest::Lbr;
    s.branches = spec.branches;
  }
  // cycles:u, cycles:k, cpu-clock:uk, ...: the levels named, as perf sets them.
  if (request != EventRequest::Raw && spec.modifiers.names_levels()) {
    const EventModifiers& m = spec.modifiers;
    if (m.kernel && !s.include_kernel)
      throw EventSelectionError("{event} " +
                                std::string(engine_event_name(request == EventRequest::CpuClock
                                                                  ? SamplingEngine::CpuClock
                                                                  : SamplingEngine::Cycles)) +
                                ":" + (m.user ? "u" : "") +
                                "k asks for kernel samples, which this process may "
                                "not take: " +
                                refusal_why + " (use :u, or grant CAP_PERFMON)");
    s.kernel_note.clear();  // the levels are what was asked, not a restriction
    s.include_kernel = m.kernel;
    s.kernel_only = s.kernel_only || !m.user;
    s.modifiers = m;
  }
  auto trial = [&](SamplingEngine engine, const SamplingRate& rate) {
    return context.probe(make_probe_attr(engine, rate, s.include_kernel, s.branches));
  };
  switch (request) {
    case EventRequest::Cycles:
      s.engine = SamplingEngine::Cycles;
      s.engine_note = "sampling cycles ({event} cycles)";
      break;
    case EventRequest::CpuClock:
      s.engine = SamplingEngine::CpuClock;
      s.engine_note = "sampling cpu-clock ({event} cpu-clock)";
      break;
    case EventRequest::Lbr: {
      if (cpu.branch_stack == BranchHardware::None)
        throw EventSelectionError(
            "{event} lbr: this CPU has no branch stack that samples on cycles (Intel LBR, AMD "
            "LbrExtV2, Arm BRBE); looked at: " +
            probe_summary(cpu) +
            (cpu.brs ? ". It has AMD BRS: use {event} brs"
                     : ". Use {event} auto or {event} cpu-clock"));
      const int err = trial(SamplingEngine::BranchStack, s.rate);
      if (err != 0)
        throw EventSelectionError(
            std::string("{event} lbr: ") + branch_hardware_name(cpu.branch_stack) + " found (" +
            probe_summary(cpu) + ") but perf_event_open refused cycles with a branch stack (" +
            errno_name(err) + ")");
      s.engine = SamplingEngine::BranchStack;
      s.branch_hardware = cpu.branch_stack;
      s.engine_note = std::string("sampling cycles with ") +
                      branch_hardware_name(cpu.branch_stack) + " branch stacks ({event} lbr)";
      break;
    }
    case EventRequest::Spe: {
      if (cpu.spe_pmus.empty())
        throw EventSelectionError(
            "{event} spe: this machine has no Arm SPE PMU (the statistical "
            "profiling extension, arm_spe_N); looked at: " +
            probe_summary(cpu) + ". Use {event} auto");
      const SpePmu& pmu = cpu.spe_pmus.front();
      // Branch records asked: SPE's own filter, not a perf branch stack (the records' branches
      // are synthesized as one-entry stacks, spe_sample_synthesizer.h).
      s.spe_branches_only = s.branches.has_value();
      s.branches.reset();
      s.rate = spe_rate(options, pmu);
      s.spe_pmu = pmu;
      s.spe_privileged = p.perfmon();  // the driver's perfmon_capable(), whatever the sysctl
      const int err = context.probe(make_spe_attr(pmu, spe_options(s, TargetKind::Command)));
      if (err != 0)
        throw EventSelectionError("{event} spe: " + pmu.name + " found (type " +
                                  std::to_string(pmu.type) + ", min_interval " +
                                  std::to_string(pmu.min_interval) +
                                  ") but perf_event_open refused it (" + errno_name(err) + ")");
      s.engine = SamplingEngine::Spe;
      s.engine_note = "sampling Arm SPE (" + pmu.name + ") every " + std::to_string(s.rate.value) +
                      " operations ({event} spe" +
                      (s.spe_branches_only ? "; branch records only, SPE's branch filter)" : ")");
      break;
    }
    case EventRequest::Brs: {
      s.rate = brs_rate(options);
      if (!cpu.brs)
        throw EventSelectionError(
            "{event} brs: this CPU has no AMD BRS (Zen3's branch sampling); "
            "looked at: " +
            probe_summary(cpu) +
            (cpu.branch_stack != BranchHardware::None
                 ? std::string(". It has ") + branch_hardware_name(cpu.branch_stack) +
                       ": use {event} lbr"
                 : ". Use {event} auto or {event} cpu-clock"));
      const int err = trial(SamplingEngine::Brs, s.rate);
      if (err != 0)
        throw EventSelectionError("{event} brs: AMD BRS found (" + probe_summary(cpu) +
                                  ") but perf_event_open refused raw event 0xc4 with a branch "
                                  "stack (" +
                                  errno_name(err) + ")");
      s.engine = SamplingEngine::Brs;
      s.branch_hardware = BranchHardware::AmdBrs;
      s.engine_note =
          "sampling AMD BRS branch stacks on retired taken branches (raw 0xc4), "
          "every " +
          std::to_string(s.rate.value) + " ({event} brs)";
      break;
    }
    case EventRequest::Raw: {
      const std::string asked = raw_event_name(spec.raw_hex, spec.modifiers);
      EventModifiers m = spec.modifiers;
      const bool user_only_asked = m.user && !m.kernel;
      if (!s.include_kernel) {
        if (m.kernel)
          throw EventSelectionError("{event} " + asked +
                                    " asks for kernel samples, which this "
                                    "process may not take: " +
                                    refusal_why + " (use :u, or grant CAP_PERFMON)");
        m.user = true;  // a bare raw event becomes :u, as perf falls back to
      }
      if (user_only_asked) s.kernel_note.clear();  // what was asked, not a restriction
      s.include_kernel = !(m.user && !m.kernel);
      s.engine = SamplingEngine::Raw;
      s.raw_config = spec.raw_config;
      s.modifiers = m;
      const std::string named = raw_event_name(spec.raw_hex, m);
      if (spec.branches) {
        // Zen3 without LbrExtV2: the stack comes from BRS, on 0xc4 only, by period only.
        const bool brs_only = cpu.brs && cpu.branch_stack == BranchHardware::None;
        if (brs_only && spec.raw_config != kAmdBrsRawEvent)
          throw EventSelectionError("{event} " + asked + " " + branch_filter_text(*spec.branches) +
                                    ": this CPU records branch stacks only with AMD BRS, on raw "
                                    "event r0c4 (retired taken branches); looked at: " +
                                    probe_summary(cpu));
        if (brs_only)
          s.rate = brs_rate(options, "{event} " + asked + " with a branch stack (AMD BRS)");
        s.branch_hardware = brs_only ? BranchHardware::AmdBrs : cpu.branch_stack;
      }
      s.engine_note =
          "sampling raw event " + named + " (config 0x" + hex_of(spec.raw_config) + ")" +
          (spec.branches ? " with branch stacks (" + branch_filter_text(*spec.branches) + ")"
                         : std::string()) +
          (s.rate.by_frequency ? " at " + std::to_string(s.rate.value) + " Hz"
                               : " every " + std::to_string(s.rate.value));
      s.name = named;
      return s;
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
        why_not = "AMD BRS not used: it samples by period only and {frequency} was given";
      } else if (cpu.brs) {
        const SamplingRate rate = brs_rate(options);
        const int err = trial(SamplingEngine::Brs, rate);
        if (err == 0) {
          s.engine = SamplingEngine::Brs;
          s.branch_hardware = BranchHardware::AmdBrs;
          s.rate = rate;
          s.engine_note =
              "AMD BRS found, sampling branch stacks on retired taken branches "
              "(raw 0xc4) every " +
              std::to_string(rate.value);
          break;
        }
        why_not = "AMD BRS refused (" + errno_name(err) + ")";
      } else if (!cpu.spe_pmus.empty() && cpu.vendor == "Arm") {
        // An Arm machine without BRBE: SPE gives branches (one per sampled branch operation).
        const SpePmu& pmu = cpu.spe_pmus.front();
        if (options.frequency_hz) {
          why_not = "Arm SPE (" + pmu.name +
                    ") not used: it samples by interval only and {frequency} was given";
        } else {
          s.rate = spe_rate(options, pmu);
          s.spe_pmu = pmu;
          s.spe_privileged = p.perfmon();
          const int err = context.probe(make_spe_attr(pmu, spe_options(s, TargetKind::Command)));
          if (err == 0) {
            s.engine = SamplingEngine::Spe;
            s.engine_note = "no branch stack (BRBE), Arm SPE found (" + pmu.name +
                            "): sampling operations every " + std::to_string(s.rate.value) +
                            " with their branch targets";
            break;
          }
          s.rate = choose_rate(options);
          why_not = "Arm SPE (" + pmu.name + ") refused (" + errno_name(err) + ")";
        }
      } else if (!cpu.probed.empty()) {
        // What was looked at is long (every PMU listed): said in the summary, not in the line.
        why_not = "no branch-stack hardware";
        s.probe_note = cpu.describe_probe();
      }
      const std::string prefix = why_not.empty() ? "" : why_not + "; ";
      const int err = trial(SamplingEngine::Cycles, s.rate);
      if (err == 0) {
        s.engine = SamplingEngine::Cycles;
        s.engine_note =
            prefix + "hardware PMU found, sampling cycles (IP samples, no branch stacks)";
      } else {
        s.engine = SamplingEngine::CpuClock;
        s.engine_note = prefix + (means_no_pmu(err) ? "no hardware PMU" : "cycles not usable") +
                        " (cycles: " + errno_name(err) +
                        "): falling back to IP sampling on cpu-clock";
      }
      break;
    }
  }
  const char* level = s.modifiers.names_levels()
                          ? (s.modifiers.user ? (s.modifiers.kernel ? "uk" : "u") : "k")
                      : s.kernel_only    ? "k"
                      : s.include_kernel ? ""
                                         : "u";
  // perf spells a PMU event's modifiers after its slashes, without a colon: "arm_spe_0//u".
  if (s.engine == SamplingEngine::Spe)
    s.name = s.spe_pmu.name + "//" + level;
  else
    s.name = std::string(engine_event_name(s.engine)) + (*level ? ":" : "") + level;
  return s;
}

perf_event_attr make_sampling_attr(const EventSelection& selection, TargetKind target,
                                   bool with_build_id) {
  perf_event_attr attr;
  if (selection.engine == SamplingEngine::Spe) {
    attr = make_spe_attr(selection.spe_pmu, spe_options(selection, target));
    if (selection.kernel_only) attr.exclude_user = 1;
  } else {
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    set_engine(attr, selection.engine, selection.raw_config);
    set_rate(attr, selection.rate);
    if (selection.engine == SamplingEngine::Raw || selection.modifiers.names_levels())
      set_modifier_privilege(attr, selection.modifiers);
    else
      set_privilege(attr, selection.include_kernel);
    if (selection.kernel_only) attr.exclude_user = 1;
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                       PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;
    set_branches(attr, selection.engine, selection.include_kernel, selection.branches);
  }
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
