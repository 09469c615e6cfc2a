// Event selection: -e/-F/-c and the permissions decide the engine, the rate and the privilege
// level; make_sampling_attr turns them into the attr, checked here field by field against the
// perf_event_open ABI (include/uapi/linux/perf_event.h).
#include "collector/live/event_selection.h"
#include "collector/cli/cli_spelling.h"

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
  EXPECT_EQ(parse_event_request("lbr"), EventRequest::Lbr);
  EXPECT_EQ(parse_event_request("brs"), EventRequest::Brs);
  EXPECT_THROW(parse_event_request("instructions"), EventSelectionError);
  EXPECT_THROW(parse_event_request(""), EventSelectionError);
}

TEST(EventSelection, AutoTakesCpuClockWhenThereIsNoPmuAndSaysWhy) {
  ProbeLog log;
  EventSelection s = select_event({}, context(unprivileged(), ENOENT, &log));
  EXPECT_EQ(s.engine, SamplingEngine::CpuClock);
  EXPECT_EQ(s.engine_note,
            "no hardware PMU (cycles: ENOENT): falling back to IP sampling on cpu-clock");
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
  EXPECT_EQ(s.engine_note,
            "cycles not usable (cycles: EACCES): falling back to IP sampling on cpu-clock");
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

// perf's u and k on cycles and cpu-clock set the privilege bits as perf's modifier parser does
// (tools/perf/util/parse-events.c, get_event_modifier): the first of u/k excludes user, kernel
// and hypervisor, each names its level back; u also excludes guests.
TEST(EventSelection, PrivilegeModifiersOnCyclesAndCpuClock) {
  struct Case {
    const char* event;
    bool exclude_user, exclude_kernel, exclude_guest;
  };
  for (const Case& c :
       {Case{"cpu-clock:u", false, true, true}, Case{"cpu-clock:k", true, false, false},
        Case{"cycles:uk", false, false, true}, Case{"cycles:ku", false, false, true}}) {
    SCOPED_TRACE(c.event);
    EventOptions o;
    o.event = parse_event_request(c.event);
    const EventSelection s = select_event(o, context(with_perfmon(), 0));
    const perf_event_attr a = make_sampling_attr(s, TargetKind::Command);
    EXPECT_EQ(a.exclude_user, c.exclude_user);
    EXPECT_EQ(a.exclude_kernel, c.exclude_kernel);
    EXPECT_EQ(a.exclude_hv, 1u);
    EXPECT_EQ(a.exclude_guest, c.exclude_guest);
    EXPECT_EQ(s.name, c.event[1] == 'y' ? "cycles:uk" : c.event);
    EXPECT_TRUE(s.kernel_note.empty()) << s.kernel_note;
  }
  // :u asks for less than this process may take: no note about kernel samples left out.
  EventOptions o;
  o.event = parse_event_request("cpu-clock:u");
  EXPECT_TRUE(select_event(o, context(unprivileged(2), 0)).kernel_note.empty());
  // :k without the right to kernel samples is refused, saying why.
  o.event = parse_event_request("cycles:k");
  try {
    select_event(o, context(unprivileged(2), 0));
    ADD_FAILURE() << "cycles:k taken without the right to kernel samples";
  } catch (const EventSelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("perf_event_paranoid is 2"), std::string::npos)
        << e.what();
  }
}

TEST(EventSelection, ModifiersNotTakenAreRefusedByName) {
  for (const char* event :
       {"cycles:p", "cycles:uH", "cpu-clock:G", "cpu-clock:", "lbr:u", "auto:k", "spe:u"}) {
    try {
      parse_event_request(event);
      ADD_FAILURE() << event << " taken";
    } catch (const EventSelectionError& e) {
      EXPECT_NE(std::string(e.what()).find(event), std::string::npos) << e.what();
    }
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
                                    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER});
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

// ---- Branch-stack engines --------------------------------------------------------------------

CpuCapabilities cpu_with(BranchHardware stack, bool brs = false) {
  CpuCapabilities c;
  c.pmu = "cpu";
  c.branch_stack = stack;
  c.brs = brs;
  c.probed = {"probe line"};
  return c;
}

// A trial open that answers per engine: branch-stack attrs, plain cycles, cpu-clock.
struct EngineAnswers {
  int branch = 0, cycles = 0, cpu_clock = 0;
};
SelectionContext context_for(const CpuCapabilities& cpu, EngineAnswers answers, ProbeLog* log,
                             PerfPermissions p = with_perfmon()) {
  SelectionContext c = context(p, 0);
  c.cpu = cpu;
  c.probe = [answers, log](const perf_event_attr& a) {
    if (log) log->asked.push_back(a);
    if (a.sample_type & PERF_SAMPLE_BRANCH_STACK) return answers.branch;
    return a.type == PERF_TYPE_HARDWARE ? answers.cycles : answers.cpu_clock;
  };
  return c;
}

TEST(BranchSelection, AutoTakesTheBranchStackOnCyclesFirst) {
  for (BranchHardware kind : {BranchHardware::IntelLbr, BranchHardware::IntelArchLbr,
                              BranchHardware::AmdLbrV2, BranchHardware::ArmBrbe}) {
    ProbeLog log;
    EventSelection s = select_event({}, context_for(cpu_with(kind), {}, &log));
    EXPECT_EQ(s.engine, SamplingEngine::BranchStack);
    EXPECT_EQ(s.branch_hardware, kind);
    EXPECT_EQ(s.name, "cycles");
    EXPECT_NE(s.engine_note.find(branch_hardware_name(kind)), std::string::npos) << s.engine_note;
    ASSERT_EQ(log.asked.size(), 1u);
    // The trial carries the branch request, which is what the kernel checks at open.
    EXPECT_EQ(log.asked[0].type, uint32_t{PERF_TYPE_HARDWARE});
    EXPECT_EQ(log.asked[0].config, uint64_t{PERF_COUNT_HW_CPU_CYCLES});
    EXPECT_EQ(
        log.asked[0].branch_sample_type,
        uint64_t{PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL});
    EXPECT_EQ(log.asked[0].freq, 1u);
  }
}

TEST(BranchSelection, AutoFallsFromARefusedBranchStackToCyclesAndSaysWhy) {
  ProbeLog log;
  EventSelection s =
      select_event({}, context_for(cpu_with(BranchHardware::IntelLbr), {EOPNOTSUPP, 0, 0}, &log));
  EXPECT_EQ(s.engine, SamplingEngine::Cycles);
  EXPECT_EQ(s.engine_note,
            "Intel LBR refused (EOPNOTSUPP); hardware PMU found, sampling cycles (IP samples, no "
            "branch stacks)");
  EXPECT_EQ(log.asked.size(), 2u);
}

TEST(BranchSelection, AutoOnZen3TakesBrsWithAFixedPeriod) {
  ProbeLog log;
  EventSelection s = select_event({}, context_for(cpu_with(BranchHardware::None, true), {}, &log));
  EXPECT_EQ(s.engine, SamplingEngine::Brs);
  EXPECT_EQ(s.branch_hardware, BranchHardware::AmdBrs);
  EXPECT_FALSE(s.rate.by_frequency);
  EXPECT_EQ(s.rate.value, kDefaultBrsPeriod);
  ASSERT_EQ(log.asked.size(), 1u);
  EXPECT_EQ(log.asked[0].type, uint32_t{PERF_TYPE_RAW});
  EXPECT_EQ(log.asked[0].config, 0xc4u);
  EXPECT_EQ(log.asked[0].freq, 0u);
  EXPECT_EQ(log.asked[0].sample_period, kDefaultBrsPeriod);
}

TEST(BranchSelection, AutoOnZen3WithFrequencySkipsBrsAndSaysWhy) {
  ProbeLog log;
  EventOptions o;
  o.frequency_hz = 999;
  EventSelection s = select_event(o, context_for(cpu_with(BranchHardware::None, true), {}, &log));
  EXPECT_EQ(s.engine, SamplingEngine::Cycles);
  EXPECT_NE(in_cli_terms(s.engine_note)
                .find("AMD BRS not used: it samples by period only and -F was given"),
            std::string::npos)
      << s.engine_note;
  for (const auto& a : log.asked) EXPECT_EQ(a.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
}

TEST(BranchSelection, AutoWithoutAnythingEndsOnCpuClockAndNamesWhatWasProbed) {
  EventSelection s =
      select_event({}, context_for(cpu_with(BranchHardware::None), {ENOENT, ENOENT, 0}, nullptr));
  EXPECT_EQ(s.engine, SamplingEngine::CpuClock);
  EXPECT_EQ(s.engine_note,
            "no branch-stack hardware; no hardware PMU (cycles: ENOENT): falling back to IP "
            "sampling on cpu-clock");
  EXPECT_EQ(s.probe_note, "probe line");
}

TEST(BranchSelection, LbrWithoutHardwareFailsWithWhatWasProbed) {
  EventOptions o;
  o.event = EventRequest::Lbr;
  try {
    select_event(o, context_for(cpu_with(BranchHardware::None), {}, nullptr));
    FAIL() << "no error";
  } catch (const EventSelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("no branch stack"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("probe line"), std::string::npos) << e.what();
  }
  // On Zen3 the message points at -e brs.
  try {
    select_event(o, context_for(cpu_with(BranchHardware::None, true), {}, nullptr));
    FAIL() << "no error";
  } catch (const EventSelectionError& e) {
    EXPECT_NE(e.spelled(cli_flag_of).find("use -e brs"), std::string::npos) << e.what();
  }
}

TEST(BranchSelection, LbrRefusedByTheKernelNamesTheErrno) {
  EventOptions o;
  o.event = EventRequest::Lbr;
  try {
    select_event(o, context_for(cpu_with(BranchHardware::ArmBrbe), {EACCES, 0, 0}, nullptr));
    FAIL() << "no error";
  } catch (const EventSelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("Arm BRBE found"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("EACCES"), std::string::npos) << e.what();
  }
  EventSelection s =
      select_event(o, context_for(cpu_with(BranchHardware::ArmBrbe), {0, 0, 0}, nullptr));
  EXPECT_EQ(s.engine, SamplingEngine::BranchStack);
}

TEST(BranchSelection, BrsRefusesFrequencyAndSaysWhy) {
  EventOptions o;
  o.event = EventRequest::Brs;
  o.frequency_hz = 999;
  try {
    select_event(o, context_for(cpu_with(BranchHardware::None, true), {}, nullptr));
    FAIL() << "no error";
  } catch (const EventSelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("fixed period only"), std::string::npos) << e.what();
    EXPECT_NE(e.spelled(cli_flag_of).find("-c N"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("period N"), std::string::npos)
        << "the library speaks of settings: " << e.what();
  }
  o.frequency_hz.reset();
  o.period = 16;  // not above the 16 entries
  EXPECT_THROW(select_event(o, context_for(cpu_with(BranchHardware::None, true), {}, nullptr)),
               EventSelectionError);
  o.period = 17;
  EventSelection s =
      select_event(o, context_for(cpu_with(BranchHardware::None, true), {}, nullptr));
  EXPECT_EQ(s.engine, SamplingEngine::Brs);
  EXPECT_EQ(s.rate.value, 17u);
  EXPECT_EQ(s.name, "r0c4");
}

TEST(BranchSelection, BrsOnACpuWithoutItPointsAtLbr) {
  EventOptions o;
  o.event = EventRequest::Brs;
  try {
    select_event(o, context_for(cpu_with(BranchHardware::AmdLbrV2), {}, nullptr));
    FAIL() << "no error";
  } catch (const EventSelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("no AMD BRS"), std::string::npos) << e.what();
    EXPECT_NE(e.spelled(cli_flag_of).find("AMD LbrExtV2: use -e lbr"), std::string::npos)
        << e.what();
  }
}

TEST(SamplingAttr, BranchStackOnCyclesUserOnly) {
  EventSelection s = cpu_clock(false);
  s.engine = SamplingEngine::BranchStack;
  const auto a = make_sampling_attr(s, TargetKind::Command);
  EXPECT_EQ(a.type, uint32_t{PERF_TYPE_HARDWARE});
  EXPECT_EQ(a.config, uint64_t{PERF_COUNT_HW_CPU_CYCLES});
  EXPECT_EQ(a.config1, 0u);
  EXPECT_EQ(a.config2, 0u);
  EXPECT_EQ(a.freq, 1u);
  EXPECT_EQ(a.sample_freq, kDefaultFrequencyHz);
  EXPECT_NE(a.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
  EXPECT_EQ(a.branch_sample_type, uint64_t{PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER});
  EXPECT_EQ(a.exclude_kernel, 1u);
  EXPECT_EQ(a.exclude_hv, 1u);
  EXPECT_EQ(a.precise_ip, 0u);
}

TEST(SamplingAttr, BrsWithKernel) {
  EventSelection s = cpu_clock(true, {false, 100003});
  s.engine = SamplingEngine::Brs;
  const auto a = make_sampling_attr(s, TargetKind::Command);
  EXPECT_EQ(a.type, uint32_t{PERF_TYPE_RAW});
  EXPECT_EQ(a.config, 0xc4u);
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.sample_period, 100003u);
  EXPECT_NE(a.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
  EXPECT_EQ(a.branch_sample_type,
            uint64_t{PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL});
  EXPECT_EQ(a.exclude_kernel, 0u);
}

TEST(SamplingAttr, IpEnginesHaveNoBranchStack) {
  for (SamplingEngine e : {SamplingEngine::Cycles, SamplingEngine::CpuClock}) {
    EventSelection s = cpu_clock(true);
    s.engine = e;
    const auto a = make_sampling_attr(s, TargetKind::Command);
    EXPECT_EQ(a.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
    EXPECT_EQ(a.branch_sample_type, 0u);
  }
}

// ---- Raw events and -b / -j (perf's rHEX[:MODIFIERS], -b, -j any[,u][,k]) -------------------
// The expected fields are perf's documented meaning of the words (tools/perf/Documentation/
// perf-list.txt: u = user, k = kernel, p = precise_ip; perf-record.txt: -b = -j any), in the
// perf_event_open ABI; tests/integration/event_attr_vs_perf_test.cpp checks them against perf.

EventSpec spec_of(const std::string& event, bool any_branch = false, const std::string& j = "") {
  return parse_event_request(event, any_branch, j);
}

TEST(RawEventParsing, HexConfigAndModifiers) {
  EventSpec e = parse_event_request("r20c4:k");
  EXPECT_EQ(e.request, EventRequest::Raw);
  EXPECT_EQ(e.raw_config, 0x20c4u);
  EXPECT_EQ(e.modifiers, (EventModifiers{false, true, 0}));
  EXPECT_FALSE(e.branches.has_value());
  e = parse_event_request("r0c4");
  EXPECT_EQ(e.raw_config, 0xc4u);
  EXPECT_EQ(e.modifiers, EventModifiers{});
  // Named as written, as perf names it (r0c4, not rc4).
  EventOptions o;
  o.event = e;
  EXPECT_EQ(select_event(o, context(with_perfmon(), 0)).name, "r0c4");
  EXPECT_EQ(parse_event_request("r1A2b:upp").modifiers, (EventModifiers{true, false, 2}));
  EXPECT_EQ(parse_event_request("r1A2b:upp").raw_config, 0x1a2bu);
  EXPECT_EQ(parse_event_request("r20c4:ppp").modifiers, (EventModifiers{false, false, 3}));
  EXPECT_EQ(parse_event_request("r20c4:uk").modifiers, (EventModifiers{true, true, 0}));
  EXPECT_EQ(parse_event_request("rffffffffffffffff").raw_config, ~uint64_t{0});
}

TEST(RawEventParsing, RejectsWhatPerfSyntaxDoesNotMeanOrWeDoNotTake) {
  // cycles:u is taken (EventSelection.PrivilegeModifiersOnCyclesAndCpuClock); cycles:pp is not.
  for (const char* bad : {"r", "r0x20c4", "rzz", "r20c4:", "r12345678901234567", "r20c4:pppp",
                          "r20c4 -x", "cycles:pp", "instructions"})
    EXPECT_THROW(parse_event_request(bad), EventSelectionError) << bad;
  // Unsupported modifiers are named, with what is taken.
  for (const char* mod : {"h", "G", "H", "I", "S", "D", "W", "e"}) {
    try {
      parse_event_request(std::string("r20c4:u") + mod);
      FAIL() << mod << " accepted";
    } catch (const EventSelectionError& err) {
      const std::string what = err.what();
      EXPECT_NE(what.find(std::string("modifier '") + mod + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("u (user), k (kernel) and p, pp or ppp"), std::string::npos) << what;
    }
  }
}

TEST(RawEventParsing, BranchRequests) {
  EXPECT_EQ(spec_of("r20c4:k", true).branches, BranchFilter{});
  EXPECT_EQ(spec_of("r0c4", false, "any,u").branches, (BranchFilter{true, false}));
  EXPECT_EQ(spec_of("r0c4", false, "k,any,u").branches, (BranchFilter{true, true}));
  EXPECT_EQ(spec_of("lbr", false, "any").branches, BranchFilter{});
  EXPECT_FALSE(spec_of("r0c4").branches.has_value());
  EXPECT_FALSE(spec_of("auto").branches.has_value());
  for (const char* bad : {"u", "", "any,hv", "any_call", "any,", "any,u,x"})
    EXPECT_THROW(parse_branch_filter(bad), EventSelectionError) << bad;
  EXPECT_THROW(spec_of("r0c4", false, "any,cond"), EventSelectionError);
  EXPECT_THROW(spec_of("r0c4", true, "any"), EventSelectionError);
}

EventOptions raw_options(const std::string& event, bool any_branch = false,
                         const std::string& j = "") {
  EventOptions o;
  o.event = spec_of(event, any_branch, j);
  return o;
}

TEST(RawEventSelection, IntelAutoFdoKernelRequestFieldByField) {
  // perf record -e BR_INST_RETIRED.NEAR_TAKEN:k -a -N -b -c 500009 (the kernel AutoFDO recipe).
  ProbeLog log;
  EventOptions o = raw_options("r20c4:k", true);
  o.period = 500009;
  const EventSelection s =
      select_event(o, context_for(cpu_with(BranchHardware::IntelLbr), {}, &log));
  EXPECT_TRUE(log.asked.empty());  // a raw event is not tried: the real open says what fails
  EXPECT_EQ(s.engine, SamplingEngine::Raw);
  EXPECT_EQ(s.name, "r20c4:k");
  EXPECT_TRUE(s.include_kernel);
  const auto a = make_sampling_attr(s, TargetKind::SystemWide);
  EXPECT_EQ(a.type, uint32_t{PERF_TYPE_RAW});
  EXPECT_EQ(a.config, 0x20c4u);
  EXPECT_EQ(a.config1, 0u);
  EXPECT_EQ(a.config2, 0u);
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.sample_period, 500009u);
  EXPECT_EQ(a.exclude_user, 1u);
  EXPECT_EQ(a.exclude_kernel, 0u);
  EXPECT_EQ(a.exclude_hv, 1u);
  EXPECT_EQ(a.exclude_guest, 0u);  // perf's `k` alone leaves guests in
  EXPECT_EQ(a.precise_ip, 0u);
  EXPECT_NE(a.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
  EXPECT_EQ(a.branch_sample_type, uint64_t{PERF_SAMPLE_BRANCH_ANY});  // -b: the event's levels
  EXPECT_EQ(a.inherit, 0u);
}

TEST(RawEventSelection, UserOnlyPreciseAndDefaultRate) {
  const EventSelection s =
      select_event(raw_options("r20c4:upp", false, "any,u"),
                   context_for(cpu_with(BranchHardware::IntelLbr), {}, nullptr));
  EXPECT_FALSE(s.include_kernel);
  const auto a = make_sampling_attr(s, TargetKind::Command);
  EXPECT_EQ(a.freq, 1u);
  EXPECT_EQ(a.sample_freq, kDefaultFrequencyHz);
  EXPECT_EQ(a.exclude_user, 0u);
  EXPECT_EQ(a.exclude_kernel, 1u);
  EXPECT_EQ(a.exclude_hv, 1u);
  EXPECT_EQ(a.exclude_guest, 1u);
  EXPECT_EQ(a.precise_ip, 2u);
  EXPECT_EQ(a.branch_sample_type, uint64_t{PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER});
  // No modifier, no branch stack: every level, nothing excluded but guests.
  const auto b = make_sampling_attr(
      select_event(raw_options("r3c"), context_for(cpu_with(BranchHardware::None), {}, nullptr)),
      TargetKind::Command);
  EXPECT_EQ(b.config, 0x3cu);
  EXPECT_EQ(b.exclude_user + b.exclude_kernel + b.exclude_hv, 0u);
  EXPECT_EQ(b.exclude_guest, 1u);
  EXPECT_EQ(b.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
  EXPECT_EQ(b.branch_sample_type, 0u);
}

TEST(RawEventSelection, KernelRuleWithoutPermission) {
  const auto ctx = context_for(cpu_with(BranchHardware::IntelLbr), {}, nullptr, unprivileged());
  // A bare raw event becomes :u, as perf falls back, and says why.
  EventSelection s = select_event(raw_options("r20c4", true), ctx);
  EXPECT_EQ(s.name, "r20c4:u");
  EXPECT_FALSE(s.include_kernel);
  EXPECT_NE(s.kernel_note.find("kernel samples are left out"), std::string::npos);
  const auto a = make_sampling_attr(s, TargetKind::Command);
  EXPECT_EQ(a.exclude_kernel, 1u);
  EXPECT_EQ(a.exclude_hv, 1u);
  // :u asked for is no restriction: no note.
  EXPECT_TRUE(select_event(raw_options("r20c4:u", true), ctx).kernel_note.empty());
  // Kernel asked for explicitly: refused, saying why.
  for (EventOptions o : {raw_options("r20c4:k", true), raw_options("r20c4:u", false, "any,u,k"),
                         raw_options("lbr", false, "any,k")}) {
    try {
      select_event(o, ctx);
      FAIL() << "kernel request accepted";
    } catch (const EventSelectionError& e) {
      EXPECT_NE(std::string(e.what()).find("perf_event_paranoid is 2"), std::string::npos)
          << e.what();
    }
  }
}

TEST(RawEventSelection, BrsRulesForR0c4WithABranchStackOnZen3) {
  const auto zen3 = context_for(cpu_with(BranchHardware::None, true), {}, nullptr);
  EventSelection s = select_event(raw_options("r0c4", false, "any,u"), zen3);
  EXPECT_EQ(s.branch_hardware, BranchHardware::AmdBrs);
  EXPECT_FALSE(s.rate.by_frequency);
  EXPECT_EQ(s.rate.value, kDefaultBrsPeriod);
  EventOptions o = raw_options("r0c4", false, "any,u");
  o.frequency_hz = 999;
  try {
    select_event(o, zen3);
    FAIL() << "-F accepted for BRS";
  } catch (const EventSelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("fixed period only"), std::string::npos) << e.what();
  }
  o.frequency_hz.reset();
  o.period = 16;
  EXPECT_THROW(select_event(o, zen3), EventSelectionError);
  o.period = 17;
  EXPECT_EQ(select_event(o, zen3).rate.value, 17u);
  // Another event with a branch stack: Zen3 has no stack for it.
  EXPECT_THROW(select_event(raw_options("r20c4", true), zen3), EventSelectionError);
  // Without a branch stack r0c4 is a plain counter: -F is fine.
  o = raw_options("r0c4");
  o.frequency_hz = 999;
  EXPECT_TRUE(select_event(o, zen3).rate.by_frequency);
  // Zen4's LbrExtV2 records beside any event, by frequency too.
  o = raw_options("r0c4", true);
  o.frequency_hz = 999;
  s = select_event(o, context_for(cpu_with(BranchHardware::AmdLbrV2, true), {}, nullptr));
  EXPECT_TRUE(s.rate.by_frequency);
  EXPECT_EQ(s.branch_hardware, BranchHardware::AmdLbrV2);
}

TEST(RawEventSelection, BranchRequestOnTheNamedEngines) {
  const auto lbr = context_for(cpu_with(BranchHardware::IntelLbr), {}, nullptr);
  // -e cycles -b is a branch stack on cycles, with perf's -b filter.
  EventSelection s = select_event(raw_options("cycles", true), lbr);
  EXPECT_EQ(s.engine, SamplingEngine::BranchStack);
  auto a = make_sampling_attr(s, TargetKind::Command);
  EXPECT_EQ(a.type, uint32_t{PERF_TYPE_HARDWARE});
  EXPECT_EQ(a.branch_sample_type, uint64_t{PERF_SAMPLE_BRANCH_ANY});
  a = make_sampling_attr(
      select_event(raw_options("brs", false, "any,u"),
                   context_for(cpu_with(BranchHardware::None, true), {}, nullptr)),
      TargetKind::Command);
  EXPECT_EQ(a.branch_sample_type, uint64_t{PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER});
  EXPECT_THROW(select_event(raw_options("auto", true), lbr), EventSelectionError);
  EXPECT_THROW(select_event(raw_options("cpu-clock", false, "any"), lbr), EventSelectionError);
}

}  // namespace
}  // namespace profcollect
