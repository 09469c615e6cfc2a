// Arm SPE PMUs found in sysfs (fake files of an Arm server with SPE and of a machine without),
// the SPE event's attr, and `-e spe` / `-e auto` selection on both.
#include "collector/live/spe_pmu.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <cerrno>

#include "collector/live/engine_choice.h"
#include "collector/live/event_selection.h"
#include "collector/host/perf_permissions.h"
#include "tests/support/in_memory_system_files.h"

namespace profcollect {
namespace {

class FakeFiles : public test::InMemorySystemFiles {
 public:
  void set(const std::string& rel, const std::string& content) {
    files[std::string(kEventSourceDevices) + "/" + rel] = content;
  }
};

// A Neoverse N1 server: armv8_pmuv3_0 without BRBE (no caps/branches), arm_spe_0 of type 8.
FakeFiles neoverse() {
  FakeFiles f;
  f.files["/proc/cpuinfo"] = "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
  f.set("armv8_pmuv3_0/type", "9\n");
  f.set("arm_spe_0/type", "8\n");
  f.set("arm_spe_0/caps/min_interval", "1024\n");
  f.set("software/type", "1\n");
  return f;
}

TEST(SpePmu, FindsArmSpePmusWithTypeAndMinInterval) {
  std::vector<std::string> probed;
  const auto pmus = find_spe_pmus(neoverse(), &probed);
  ASSERT_EQ(pmus.size(), 1u);
  EXPECT_EQ(pmus[0].name, "arm_spe_0");
  EXPECT_EQ(pmus[0].type, 8u);
  EXPECT_EQ(pmus[0].min_interval, 1024u);
  EXPECT_FALSE(probed.empty());
  EXPECT_EQ(probe_cpu_capabilities(neoverse()).spe_pmus.size(), 1u);
  EXPECT_EQ(probe_cpu_capabilities(neoverse()).branch_stack, BranchHardware::None);
}

TEST(SpePmu, NoneOnAMachineWithout) {
  FakeFiles f;
  f.set("software/type", "1\n");
  std::vector<std::string> probed;
  EXPECT_TRUE(find_spe_pmus(f, &probed).empty());
  ASSERT_EQ(probed.size(), 1u);
  EXPECT_NE(probed[0].find("no Arm SPE PMU"), std::string::npos);
}

TEST(SpePmu, AttrRaisesThePeriodAndAsksPhysicalDataOnlyWithPrivilege) {
  const SpePmu pmu{"arm_spe_0", 8, 1024};
  perf_event_attr a = make_spe_attr(pmu, {.period = 100, .branches_only = true});
  EXPECT_EQ(a.type, 8u);
  EXPECT_EQ(a.sample_period, 1024u);  // never below caps/min_interval
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.config, kSpeTsEnable | kSpeJitter | kSpeBranchFilter);
  EXPECT_EQ(a.exclude_kernel, 1u);
  EXPECT_EQ(a.inherit, 1u);
  a = make_spe_attr(
      pmu, {.period = 5000, .privileged = true, .include_kernel = true, .system_wide = true});
  EXPECT_EQ(a.sample_period, 5000u);
  EXPECT_EQ(a.config, kSpeTsEnable | kSpeJitter | kSpePaEnable | kSpePctEnable);
  EXPECT_EQ(a.exclude_kernel, 0u);
  EXPECT_EQ(a.inherit, 0u);
  EXPECT_EQ(make_spe_attr(SpePmu{"arm_spe_1", 9, 0}, {}).sample_period, kDefaultSpeInterval);
}

SelectionContext context_of(const SystemFiles& files) {
  SelectionContext c;
  c.permissions = PerfPermissions::from(2, 0, 1000);
  c.probe = [](const perf_event_attr&) { return 0; };
  c.cpu = probe_cpu_capabilities(files);
  return c;
}

TEST(SpePmu, SpeRequestSaysWhatIsMissing) {
  EXPECT_EQ(parse_event_request("spe"), EventRequest::Spe);
  FakeFiles none;
  none.set("software/type", "1\n");
  EventOptions o;
  o.event = EventRequest::Spe;
  try {
    select_event(o, context_of(none));
    FAIL() << "-e spe selected without an SPE PMU";
  } catch (const EventSelectionError& e) {
    EXPECT_NE(std::string(e.what()).find("no Arm SPE PMU"), std::string::npos) << e.what();
  }
}

// The attrs the kernel is asked for, in order.
struct ProbeLog {
  std::vector<perf_event_attr> asked;
  int answer = 0;
  PerfOpenProbe probe() {
    return [this](const perf_event_attr& a) {
      asked.push_back(a);
      return answer;
    };
  }
};

TEST(SpePmu, SpeSelectsThePmuWhereThereIsOne) {
  SelectionContext c = context_of(neoverse());
  ProbeLog log;
  c.probe = log.probe();
  EventOptions o;
  o.event = EventRequest::Spe;
  o.period = 100;  // below min_interval: raised
  const EventSelection s = select_event(o, c);
  EXPECT_EQ(s.engine, SamplingEngine::Spe);
  EXPECT_EQ(s.spe_pmu.type, 8u);
  EXPECT_EQ(s.rate.value, 1024u);
  EXPECT_FALSE(s.rate.by_frequency);
  EXPECT_EQ(s.name, "arm_spe_0//u");  // paranoid 2, no CAP_PERFMON: user space only
  ASSERT_EQ(log.asked.size(), 1u);
  EXPECT_EQ(log.asked[0].type, 8u) << "the trial opens the SPE PMU itself";

  // The attr of the collection: the PMU's type, timestamps and jitter, no physical addresses
  // without CAP_PERFMON, the interval; the side-band bits the engine splits off to its dummy.
  const perf_event_attr a = make_sampling_attr(s, TargetKind::SystemWide);
  EXPECT_EQ(a.type, 8u);
  EXPECT_EQ(a.config, kSpeTsEnable | kSpeJitter);
  EXPECT_EQ(a.sample_period, 1024u);
  EXPECT_EQ(a.freq, 0u);
  EXPECT_EQ(a.exclude_kernel, 1u);
  EXPECT_EQ(a.inherit, 0u);
  EXPECT_EQ(a.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
  EXPECT_EQ(a.sample_type & PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IDENTIFIER);
  EXPECT_EQ(a.mmap2 + a.comm + a.task + a.sample_id_all, 4u);
  EXPECT_EQ(make_sampling_attr(s, TargetKind::Processes).inherit, 1u);

  // CAP_PERFMON: physical addresses and timestamps, kernel samples.
  c.permissions = PerfPermissions::from(2, uint64_t{1} << kCapPerfmon, 1000);
  const EventSelection p = select_event(o, c);
  EXPECT_EQ(p.name, "arm_spe_0//");
  EXPECT_EQ(make_sampling_attr(p, TargetKind::SystemWide).config,
            kSpeTsEnable | kSpeJitter | kSpePaEnable | kSpePctEnable);

  // -b / -j any: SPE's branch filter (PMSFCR_EL1.B, config bit 32), no perf branch stack.
  o.event.branches = BranchFilter{};
  const EventSelection b = select_event(o, c);
  EXPECT_TRUE(b.spe_branches_only);
  EXPECT_FALSE(b.branches.has_value());
  const perf_event_attr ba = make_sampling_attr(b, TargetKind::SystemWide);
  EXPECT_EQ(ba.config & kSpeBranchFilter, kSpeBranchFilter);
  EXPECT_EQ(ba.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
  EXPECT_EQ(ba.branch_sample_type, 0u);
  EXPECT_NE(b.engine_note.find("branch records only"), std::string::npos) << b.engine_note;
}

TEST(SpePmu, SpeRefusesFrequencyAndSaysWhenTheKernelRefuses) {
  SelectionContext c = context_of(neoverse());
  EventOptions o;
  o.event = EventRequest::Spe;
  o.frequency_hz = 1000;
  EXPECT_THROW(select_event(o, c), EventSelectionError);
  o.frequency_hz.reset();
  ProbeLog log;
  log.answer = EACCES;
  c.probe = log.probe();
  try {
    select_event(o, c);
    FAIL() << "selected although the kernel refused the SPE event";
  } catch (const EventSelectionError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "arm_spe_0 found (type 8, min_interval 1024) but perf_event_open "
                  "refused it (EACCES)"),
              std::string::npos)
        << e.what();
  }
}

TEST(SpePmu, AutoPicksSpeOnAnArmMachineWithSpeAndNoBrbe) {
  EventOptions o;
  o.event = EventRequest::Auto;
  const EventSelection s = select_event(o, context_of(neoverse()));
  EXPECT_EQ(s.engine, SamplingEngine::Spe);
  EXPECT_EQ(s.rate.value, 1024u);
  EXPECT_NE(s.engine_note.find("Arm SPE found (arm_spe_0)"), std::string::npos) << s.engine_note;
}

TEST(SpePmu, AutoNeverPicksSpeElsewhere) {
  EventOptions o;
  o.event = EventRequest::Auto;
  // BRBE: the branch stack is taken.
  FakeFiles brbe = neoverse();
  brbe.set("armv8_pmuv3_0/caps/branches", "64\n");
  EventSelection s = select_event(o, context_of(brbe));
  EXPECT_EQ(s.engine, SamplingEngine::BranchStack);
  EXPECT_EQ(s.branch_hardware, BranchHardware::ArmBrbe);
  // An x86-64 machine (an arm_spe_0 entry faked into its sysfs): never SPE.
  FakeFiles intel = neoverse();
  intel.files["/proc/cpuinfo"] = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t: fpu\n";
  intel.files.erase(std::string(kEventSourceDevices) + "/armv8_pmuv3_0/type");
  intel.set("cpu/type", "4\n");
  s = select_event(o, context_of(intel));
  EXPECT_NE(s.engine, SamplingEngine::Spe);
  // An Arm machine without SPE.
  FakeFiles plain = neoverse();
  plain.files.erase(std::string(kEventSourceDevices) + "/arm_spe_0/type");
  plain.files.erase(std::string(kEventSourceDevices) + "/arm_spe_0/caps/min_interval");
  s = select_event(o, context_of(plain));
  EXPECT_EQ(s.engine, SamplingEngine::Cycles);
  // SPE samples by interval only: with a frequency auto passes it by and says why.
  o.frequency_hz = 999;
  s = select_event(o, context_of(neoverse()));
  EXPECT_EQ(s.engine, SamplingEngine::Cycles);
  EXPECT_NE(s.engine_note.find("Arm SPE (arm_spe_0) not used"), std::string::npos) << s.engine_note;
}

TEST(SpePmu, OnlyThePerfEngineReadsSpe) {
  EventSelection s;
  s.engine = SamplingEngine::Spe;
  s.spe_pmu = SpePmu{"arm_spe_0", 8, 1024};
  EngineRequest r;
  r.kind = EngineKind::Bpf;
  try {
    open_engine(r, s);
    FAIL() << "the BPF engine took SPE";
  } catch (const SettingError& e) {
    EXPECT_NE(std::string(e.what()).find("AUX area"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace profcollect
