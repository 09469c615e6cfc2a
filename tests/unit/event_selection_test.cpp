// Event selection: -e/-F/-c and the permissions decide the engine, the rate and the privilege
// level; make_sampling_attr turns them into the attr, checked here field by field against the
// perf_event_open ABI (include/uapi/linux/perf_event.h).
#include "collector/event_selection.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

namespace profcollect {
namespace {

PerfPermissions unprivileged(int paranoid = 2) { return PerfPermissions::from(paranoid, 0, 1000); }
PerfPermissions with_perfmon() {
  return PerfPermissions::from(2, uint64_t{1} << kCapPerfmon, 1000);
}

// A context whose trial open answers `err` and remembers what it was asked.
struct ProbeLog {
  std::vector<perf_event_attr> asked;
};
SelectionContext context(PerfPermissions p, int probe_errno, ProbeLog* log = nullptr) {
  SelectionContext c;
  c.permissions = p;
  c.max_sample_rate = 100000;
  c.probe = [probe_errno, log](const perf_event_attr& a) {
    if (log) log->asked.push_back(a);
    return probe_errno;
  };
  return c;
}

TEST(EventSelection, ParsesTheThreeEventNames) {
  EXPECT_EQ(parse_event_request("auto"), EventRequest::Auto);
  EXPECT_EQ(parse_event_request("cycles"), EventRequest::Cycles);
  EXPECT_EQ(parse_event_request("cpu-clock"), EventRequest::CpuClock);
  EXPECT_THROW(parse_event_request("instructions"), EventSelectionError);
  EXPECT_THROW(parse_event_request(""), EventSelectionError);
}

TEST(EventSelection, AutoTakesCpuClockWhenThereIsNoPmuAndSaysWhy) {
  ProbeLog log;
  EventSelection s = select_event({}, context(unprivileged(), ENOENT, &log));
  EXPECT_EQ(s.engine, SamplingEngine::CpuClock);
  EXPECT_EQ(s.engine_note, "no hardware PMU (cycles: ENOENT), sampling cpu-clock");
  ASSERT_EQ(log.asked.size(), 1u);
  // The trial asks for what would be sampled: hardware cycles, user mode only here.
  EXPECT_EQ(log.asked[0].type, uint32_t{PERF_TYPE_HARDWARE});
  EXPECT_EQ(log.asked[0].config, uint64_t{PERF_COUNT_HW_CPU_CYCLES});
  EXPECT_EQ(log.asked[0].exclude_kernel, 1u);
  EXPECT_EQ(log.asked[0].freq, 1u);
  EXPECT_EQ(log.asked[0].sample_freq, kDefaultFrequencyHz);
  EXPECT_EQ(log.asked[0].disabled, 1u);
}

TEST(EventSelection, AutoTakesCyclesWhenThePmuOpens) {
  EventSelection s = select_event({}, context(with_perfmon(), 0));
  EXPECT_EQ(s.engine, SamplingEngine::Cycles);
  EXPECT_EQ(s.name, "cycles");
  EXPECT_NE(s.engine_note.find("sampling cycles"), std::string::npos);
}

TEST(EventSelection, AutoNamesARefusalThatIsNotAMissingPmu) {
  EventSelection s = select_event({}, context(unprivileged(), EACCES));
  EXPECT_EQ(s.engine, SamplingEngine::CpuClock);
  EXPECT_EQ(s.engine_note, "cycles not usable (cycles: EACCES), sampling cpu-clock");
}

TEST(EventSelection, ExplicitEventsDoNotProbe) {
  ProbeLog log;
  EventOptions o;
  o.event = EventRequest::Cycles;
  EXPECT_EQ(select_event(o, context(unprivileged(), ENOENT, &log)).engine, SamplingEngine::Cycles);
  o.event = EventRequest::CpuClock;
  EXPECT_EQ(select_event(o, context(unprivileged(), 0, &log)).engine, SamplingEngine::CpuClock);
  EXPECT_TRUE(log.asked.empty());
}

TEST(EventSelection, RateIsFrequencyOrPeriodNeverBoth) {
  EventOptions o;
  o.event = EventRequest::CpuClock;
  EventSelection s = select_event(o, context(with_perfmon(), 0));
  EXPECT_TRUE(s.rate.by_frequency);
  EXPECT_EQ(s.rate.value, 4000u);  // perf record's default

  o.frequency_hz = 999;
  s = select_event(o, context(with_perfmon(), 0));
  EXPECT_TRUE(s.rate.by_frequency);
  EXPECT_EQ(s.rate.value, 999u);

  o.frequency_hz.reset();
  o.period = 100003;
  s = select_event(o, context(with_perfmon(), 0));
  EXPECT_FALSE(s.rate.by_frequency);
  EXPECT_EQ(s.rate.value, 100003u);

  o.frequency_hz = 999;
  EXPECT_THROW(select_event(o, context(with_perfmon(), 0)), EventSelectionError);
  o.frequency_hz.reset();
  o.period = 0;
  EXPECT_THROW(select_event(o, context(with_perfmon(), 0)), EventSelectionError);
  o.period.reset();
  o.frequency_hz = 0;
  EXPECT_THROW(select_event(o, context(with_perfmon(), 0)), EventSelectionError);
}

TEST(EventSelection, FrequencyAboveTheKernelLimitIsLoweredWithANote) {
  EventOptions o;
  o.event = EventRequest::CpuClock;
  o.frequency_hz = 250000;
  EventSelection s = select_event(o, context(with_perfmon(), 0));
  EXPECT_EQ(s.rate.value, 100000u);
  EXPECT_NE(s.rate_note.find("kernel.perf_event_max_sample_rate"), std::string::npos);
  o.frequency_hz = 100000;
  EXPECT_TRUE(select_event(o, context(with_perfmon(), 0)).rate_note.empty());
}

TEST(EventSelection, KernelSamplesFollowParanoidAndCapabilities) {
  EventOptions o;
  o.event = EventRequest::CpuClock;
  // Paranoid 2 without capabilities: user mode only, and the note says why and how to change it.
  EventSelection s = select_event(o, context(unprivileged(2), 0));
  EXPECT_FALSE(s.include_kernel);
  EXPECT_EQ(s.name, "cpu-clock:u");
  EXPECT_NE(s.kernel_note.find("kernel samples are left out"), std::string::npos);
  EXPECT_NE(s.kernel_note.find("perf_event_paranoid is 2"), std::string::npos);
  EXPECT_NE(s.kernel_note.find("CAP_PERFMON"), std::string::npos);
  // Paranoid 1 allows kernel samples to everyone; CAP_PERFMON or CAP_SYS_ADMIN at any level.
  for (PerfPermissions p : {unprivileged(1), unprivileged(-1), with_perfmon(),
                            PerfPermissions::from(3, uint64_t{1} << kCapSysAdmin, 0)}) {
    s = select_event(o, context(p, 0));
    EXPECT_TRUE(s.include_kernel) << "paranoid " << p.paranoid;
    EXPECT_TRUE(s.kernel_note.empty());
    EXPECT_EQ(s.name, "cpu-clock");
  }
}

EventSelection cpu_clock(bool include_kernel, SamplingRate rate = {}) {
  EventSelection s;
  s.engine = SamplingEngine::CpuClock;
  s.include_kernel = include_kernel;
  s.rate = rate;
  return s;
}

TEST(SamplingAttr, CommandModeFieldByField) {
  const perf_event_attr a = make_sampling_attr(cpu_clock(true, {true, 999}), TargetKind::Command);
  EXPECT_EQ(a.size, sizeof(perf_event_attr));
  EXPECT_EQ(a.type, uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(a.config, uint64_t{PERF_COUNT_SW_CPU_CLOCK});
  EXPECT_EQ(a.freq, 1u);
  EXPECT_EQ(a.sample_freq, 999u);
  EXPECT_EQ(a.sample_type, uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                    PERF_SAMPLE_IDENTIFIER});
  EXPECT_EQ(a.read_format, 0u);
  EXPECT_EQ(a.disabled, 1u);
  EXPECT_EQ(a.inherit, 1u);
  EXPECT_EQ(a.enable_on_exec, 1u);
  EXPECT_EQ(a.mmap, 1u);
  EXPECT_EQ(a.mmap2, 1u);
  EXPECT_EQ(a.mmap_data, 0u);
  EXPECT_EQ(a.comm, 1u);
  EXPECT_EQ(a.comm_exec, 1u);
  EXPECT_EQ(a.task, 1u);
  EXPECT_EQ(a.sample_id_all, 1u);
  EXPECT_EQ(a.build_id, 1u);
  EXPECT_EQ(a.exclude_kernel, 0u);
  EXPECT_EQ(a.exclude_hv, 0u);
  EXPECT_EQ(a.exclude_user, 0u);
  EXPECT_EQ(a.exclude_guest, 1u);
  EXPECT_EQ(a.precise_ip, 0u);
  EXPECT_EQ(a.pinned, 0u);
  EXPECT_EQ(a.exclusive, 0u);
  EXPECT_EQ(a.watermark, 0u);
  EXPECT_EQ(a.wakeup_events, 0u);
  EXPECT_EQ(a.branch_sample_type, 0u);
  EXPECT_EQ(a.context_switch, 0u);
  EXPECT_EQ(a.use_clockid, 0u);
}

TEST(SamplingAttr, TargetDecidesInheritAndEnableOnExec) {
  const auto pid = make_sampling_attr(cpu_clock(true), TargetKind::Processes);
  EXPECT_EQ(pid.inherit, 1u);
  EXPECT_EQ(pid.enable_on_exec, 0u);
  EXPECT_EQ(pid.disabled, 1u);
  const auto all = make_sampling_attr(cpu_clock(true), TargetKind::SystemWide);
  EXPECT_EQ(all.inherit, 0u);
  EXPECT_EQ(all.enable_on_exec, 0u);
  EXPECT_EQ(all.disabled, 1u);
}

TEST(SamplingAttr, PeriodUserModeCyclesAndNoBuildId) {
  EventSelection s = cpu_clock(false, {false, 100003});
  s.engine = SamplingEngine::Cycles;
  const auto a = make_sampling_attr(s, TargetKind::Processes, /*with_build_id=*/false);
  EXPECT_EQ(a.type, uint32_t{PERF_TYPE_HARDWARE});
  EXPECT_EQ(a.config, uint64_t{PERF_COUNT_HW_CPU_CYCLES});
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.sample_period, 100003u);
  EXPECT_EQ(a.exclude_kernel, 1u);
  EXPECT_EQ(a.exclude_hv, 1u);
  EXPECT_EQ(a.exclude_user, 0u);
  EXPECT_EQ(a.build_id, 0u);
  EXPECT_EQ(a.mmap2, 1u);
}

}  // namespace
}  // namespace profcollect
