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
  }
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
  throw EventSelectionError("unknown event \"" + std::string(name) +
                            "\": -e takes auto, cycles or cpu-clock");
}

std::string_view engine_event_name(SamplingEngine engine) {
  switch (engine) {
    case SamplingEngine::Cycles:
      return "cycles";
    case SamplingEngine::CpuClock:
      return "cpu-clock";
  }
  return "?";
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

  switch (options.event) {
    case EventRequest::Cycles:
      s.engine = SamplingEngine::Cycles;
      s.engine_note = "sampling cycles (-e cycles)";
      break;
    case EventRequest::CpuClock:
      s.engine = SamplingEngine::CpuClock;
      s.engine_note = "sampling cpu-clock (-e cpu-clock)";
      break;
    case EventRequest::Auto: {
      const int err = context.probe(make_probe_attr(SamplingEngine::Cycles, s.rate,
                                                    s.include_kernel));
      if (err == 0) {
        s.engine = SamplingEngine::Cycles;
        s.engine_note = "hardware PMU found, sampling cycles";
      } else {
        s.engine = SamplingEngine::CpuClock;
        s.engine_note = std::string(means_no_pmu(err) ? "no hardware PMU" : "cycles not usable") +
                        " (cycles: " + errno_name(err) + "), sampling cpu-clock";
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
