// The sampling attr we build, beside the one perf record asks the kernel for with the same
// request (`perf record -vv` prints it field by field). Every field must agree, except the
// differences listed below, each for a stated reason; a field perf sets that we do not, or the
// reverse, fails the test unless it is listed.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collector/live/event_selection.h"
#include "collector/records/side_band_attr.h"
#include "tests/integration/test_support.h"

namespace profcollect {
namespace {

using Fields = std::map<std::string, std::string>;

// The first "perf_event_attr:" block of perf record -vv's stderr: "  name   value" lines up to
// the dashed line. The name may hold spaces ("{ sample_period, sample_freq }").
Fields parse_first_attr(const std::string& err) {
  Fields fields;
  bool inside = false;
  for (const std::string& line : test::split_lines(err)) {
    if (line.rfind("perf_event_attr:", 0) == 0) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.rfind("----", 0) == 0) break;
    const size_t last_space = line.find_last_of(' ');
    if (last_space == std::string::npos) continue;
    std::string name = line.substr(0, last_space);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    fields[name] = line.substr(last_space + 1);
  }
  return fields;
}

// Every "perf_event_attr:" block of perf record -vv's stderr, in order.
std::vector<Fields> parse_attr_blocks(const std::string& err) {
  std::vector<Fields> blocks;
  std::string rest = err;
  for (size_t at = rest.find("perf_event_attr:"); at != std::string::npos;
       at = rest.find("perf_event_attr:")) {
    rest = rest.substr(at);
    blocks.push_back(parse_first_attr(rest));
    rest = rest.substr(std::string("perf_event_attr:").size());
  }
  return blocks;
}

std::string bits(uint64_t value, const std::vector<std::pair<uint64_t, const char*>>& names) {
  std::string out;
  for (auto [bit, name] : names)
    if (value & bit) out += (out.empty() ? "" : "|") + std::string(name);
  return out;
}

// Our attr printed the way perf prints one (tools/perf/util/perf_event_attr_fprintf.c): only
// non-zero fields, flags as 1, sample_type and read_format as names.
Fields perf_style(const perf_event_attr& a) {
  Fields f;
  auto put = [&f](const char* name, uint64_t v) {
    if (v) f[name] = std::to_string(v);
  };
  put("type", a.type);
  put("size", a.size);
  if (a.config) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(a.config));
    f["config"] = hex;
  }
  auto put_hex = [&f](const char* name, uint64_t v) {
    if (!v) return;
    char hex[32];
    std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(v));
    f[name] = hex;
  };
  put_hex("{ bp_addr, config1 }", a.config1);
  put_hex("{ bp_len, config2 }", a.config2);
  put("{ sample_period, sample_freq }", a.sample_period);
  if (a.sample_type)
    f["sample_type"] = bits(a.sample_type, {{PERF_SAMPLE_IP, "IP"},
                                            {PERF_SAMPLE_TID, "TID"},
                                            {PERF_SAMPLE_TIME, "TIME"},
                                            {PERF_SAMPLE_ADDR, "ADDR"},
                                            {PERF_SAMPLE_READ, "READ"},
                                            {PERF_SAMPLE_CALLCHAIN, "CALLCHAIN"},
                                            {PERF_SAMPLE_ID, "ID"},
                                            {PERF_SAMPLE_CPU, "CPU"},
                                            {PERF_SAMPLE_PERIOD, "PERIOD"},
                                            {PERF_SAMPLE_STREAM_ID, "STREAM_ID"},
                                            {PERF_SAMPLE_RAW, "RAW"},
                                            {PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"},
                                            {PERF_SAMPLE_IDENTIFIER, "IDENTIFIER"}});
  if (a.read_format)
    f["read_format"] = bits(a.read_format, {{PERF_FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED"},
                                            {PERF_FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING"},
                                            {PERF_FORMAT_ID, "ID"},
                                            {PERF_FORMAT_GROUP, "GROUP"},
                                            {PERF_FORMAT_LOST, "LOST"}});
  put("disabled", a.disabled);
  put("inherit", a.inherit);
  put("pinned", a.pinned);
  put("exclusive", a.exclusive);
  put("exclude_user", a.exclude_user);
  put("exclude_kernel", a.exclude_kernel);
  put("exclude_hv", a.exclude_hv);
  put("exclude_idle", a.exclude_idle);
  put("mmap", a.mmap);
  put("comm", a.comm);
  put("freq", a.freq);
  put("inherit_stat", a.inherit_stat);
  put("enable_on_exec", a.enable_on_exec);
  put("task", a.task);
  put("watermark", a.watermark);
  put("precise_ip", a.precise_ip);
  put("mmap_data", a.mmap_data);
  put("sample_id_all", a.sample_id_all);
  put("exclude_host", a.exclude_host);
  put("exclude_guest", a.exclude_guest);
  put("exclude_callchain_kernel", a.exclude_callchain_kernel);
  put("exclude_callchain_user", a.exclude_callchain_user);
  put("mmap2", a.mmap2);
  put("comm_exec", a.comm_exec);
  put("use_clockid", a.use_clockid);
  put("context_switch", a.context_switch);
  put("write_backward", a.write_backward);
  put("namespaces", a.namespaces);
  put("ksymbol", a.ksymbol);
  put("bpf_event", a.bpf_event);
  put("aux_output", a.aux_output);
  put("cgroup", a.cgroup);
  put("text_poke", a.text_poke);
  put("build_id", a.build_id);
  put("inherit_thread", a.inherit_thread);
  put("remove_on_exec", a.remove_on_exec);
  put("sigtrap", a.sigtrap);
  put("{ wakeup_events, wakeup_watermark }", a.wakeup_events);
  if (a.branch_sample_type)
    f["branch_sample_type"] =
        bits(a.branch_sample_type, {{PERF_SAMPLE_BRANCH_USER, "USER"},
                                    {PERF_SAMPLE_BRANCH_KERNEL, "KERNEL"},
                                    {PERF_SAMPLE_BRANCH_HV, "HV"},
                                    {PERF_SAMPLE_BRANCH_ANY, "ANY"},
                                    {PERF_SAMPLE_BRANCH_ANY_CALL, "ANY_CALL"},
                                    {PERF_SAMPLE_BRANCH_ANY_RETURN, "ANY_RETURN"},
                                    {PERF_SAMPLE_BRANCH_IND_CALL, "IND_CALL"},
                                    {PERF_SAMPLE_BRANCH_ABORT_TX, "ABORT_TX"},
                                    {PERF_SAMPLE_BRANCH_IN_TX, "IN_TX"},
                                    {PERF_SAMPLE_BRANCH_NO_TX, "NO_TX"},
                                    {PERF_SAMPLE_BRANCH_COND, "COND"},
                                    {PERF_SAMPLE_BRANCH_CALL_STACK, "CALL_STACK"},
                                    {PERF_SAMPLE_BRANCH_IND_JUMP, "IND_JUMP"},
                                    {PERF_SAMPLE_BRANCH_CALL, "CALL"},
                                    {PERF_SAMPLE_BRANCH_NO_FLAGS, "NO_FLAGS"},
                                    {PERF_SAMPLE_BRANCH_NO_CYCLES, "NO_CYCLES"},
                                    {PERF_SAMPLE_BRANCH_TYPE_SAVE, "TYPE_SAVE"},
                                    {PERF_SAMPLE_BRANCH_HW_INDEX, "HW_INDEX"}});
  return f;
}

// Where we differ from perf record on purpose.
const std::map<std::string, std::string>& known_differences() {
  static const std::map<std::string, std::string> d = {
      {"size", "the attr size is that of the kernel headers each was built with"},
      {"read_format", "perf reads counter values (ID|LOST); we never read() the events"},
      {"ksymbol", "perf tracks kernel symbols for kernel profiling; our profiles are per binary"},
      {"bpf_event", "perf tracks BPF programs; we do not profile them"},
      {"build_id", "we ask for build-ids in MMAP2; perf 6.1 only with --buildid-mmap"},
  };
  return d;
}

// sample_type: ours must hold all of perf's, plus only CPU and IDENTIFIER (a buffer holds the
// events of many threads; IDENTIFIER names the event without parsing the record).
void expect_sample_type_superset(const std::string& perf, const std::string& ours,
                                 const std::set<std::string>& extra_allowed) {
  auto split = [](const std::string& s) {
    std::set<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
      size_t bar = s.find('|', start);
      out.insert(s.substr(start, bar - start));
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    return out;
  };
  const auto p = split(perf), o = split(ours);
  for (const auto& name : p) {
    // IDENTIFIER carries the same id as ID, at a fixed place in every record.
    const bool covered = o.count(name) || (name == "ID" && o.count("IDENTIFIER"));
    EXPECT_TRUE(covered) << "perf samples " << name << ", we do not";
  }
  for (const auto& name : o) {
    if (p.count(name)) continue;
    EXPECT_TRUE(name == "CPU" || name == "IDENTIFIER" || extra_allowed.count(name))
        << "we sample " << name << ", perf does not";
  }
}

// `also_allowed`: fields that may differ in this case; sample-type names in it may be ours alone.
void compare(const Fields& perf, const Fields& ours, const std::set<std::string>& also_allowed) {
  ASSERT_FALSE(perf.empty()) << "no perf_event_attr block in perf's output";
  std::set<std::string> names;
  for (const auto& [k, v] : perf) names.insert(k);
  for (const auto& [k, v] : ours) names.insert(k);
  for (const std::string& name : names) {
    const auto p = perf.find(name), o = ours.find(name);
    const std::string pv = p == perf.end() ? "(unset)" : p->second;
    const std::string ov = o == ours.end() ? "(unset)" : o->second;
    if (name == "sample_type") {
      expect_sample_type_superset(pv, ov, also_allowed);
      continue;
    }
    if (pv == ov || known_differences().count(name) || also_allowed.count(name)) continue;
    ADD_FAILURE() << name << ": perf " << pv << ", ours " << ov;
  }
}

Fields perf_attr_for(const std::vector<std::string>& event_args, test::TempDir& dir) {
  std::vector<std::string> argv = {
      "perf", "record", "-vv", "-N", "-B", "-o", (dir / "perf.data").string()};
  argv.insert(argv.end(), event_args.begin(), event_args.end());
  argv.insert(argv.end(), {"--", "true"});
  const test::CommandResult r = test::run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
  return parse_first_attr(r.err);
}

// For events this machine lacks (no PMU here): perf prints the attr it asks for, then fails to
// open it, so only the printed attr is taken.
Fields perf_attr_printed_for(const std::vector<std::string>& event_args, test::TempDir& dir) {
  std::vector<std::string> argv = {
      "perf", "record", "-vv", "-N", "-B", "-o", (dir / "perf.data").string()};
  argv.insert(argv.end(), event_args.begin(), event_args.end());
  argv.insert(argv.end(), {"--", "true"});
  const Fields f = parse_first_attr(test::run_command(argv).err);
  EXPECT_FALSE(f.empty()) << test::command_line(argv) << " printed no perf_event_attr";
  return f;
}

class EventAttrVsPerf : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::have_executable("perf")) GTEST_SKIP() << "perf is not installed";
  }
  test::TempDir dir_;
};

TEST_F(EventAttrVsPerf, CommandModeCpuClockByFrequency) {
  // Root here: both sample the kernel too.
  SelectionContext ctx = SelectionContext::of_this_process();
  if (!ctx.permissions.may_sample_kernel()) GTEST_SKIP() << "needs kernel samples (root)";
  EventOptions o;
  o.event = EventRequest::CpuClock;
  o.frequency_hz = 999;
  const EventSelection s = select_event(o, ctx);
  compare(perf_attr_for({"-e", "cpu-clock", "-F", "999"}, dir_),
          perf_style(make_sampling_attr(s, TargetKind::Command)), {});
}

TEST_F(EventAttrVsPerf, CommandModeUserOnlyByPeriod) {
  // What an unprivileged user gets at perf_event_paranoid 2 is perf's `:u`.
  SelectionContext ctx = SelectionContext::of_this_process();
  ctx.permissions = PerfPermissions::from(2, 0, 1000);
  EventOptions o;
  o.event = EventRequest::CpuClock;
  o.period = 10007;
  const EventSelection s = select_event(o, ctx);
  EXPECT_EQ(s.name, "cpu-clock:u");
  // With a fixed period perf leaves PERIOD out of the samples (the attr holds it); we keep it so
  // every sample carries its weight whatever the mode.
  compare(perf_attr_for({"-e", "cpu-clock:u", "-c", "10007"}, dir_),
          perf_style(make_sampling_attr(s, TargetKind::Command)), {"PERIOD"});
}

// -e cpu-clock:u, :k, :uk and cycles:u, as written on our command line: the attr perf asks for
// with the same words (exclude_user, exclude_kernel, exclude_hv, exclude_guest as perf's
// modifier parser sets them). cycles is only printed by perf where there is no PMU.
TEST_F(EventAttrVsPerf, PrivilegeModifiersOnNamedEvents) {
  SelectionContext ctx = SelectionContext::of_this_process();
  if (!ctx.permissions.may_sample_kernel()) GTEST_SKIP() << "needs kernel samples (root) for :k";
  for (const char* event :
       {"cpu-clock:u", "cpu-clock:k", "cpu-clock:uk", "cpu-clock:ku", "cycles:u", "cycles:k"}) {
    SCOPED_TRACE(event);
    EventOptions o;
    o.event = parse_event_request(event);
    o.frequency_hz = 999;
    const EventSelection s = select_event(o, ctx);
    compare(perf_attr_printed_for({"-e", event, "-F", "999"}, dir_),
            perf_style(make_sampling_attr(s, TargetKind::Command)), {});
  }
}

TEST_F(EventAttrVsPerf, SystemWideSamplingEvent) {
  SelectionContext ctx = SelectionContext::of_this_process();
  if (!ctx.permissions.may_sample_cpus()) GTEST_SKIP() << "needs CAP_PERFMON for -a";
  EventOptions o;
  o.event = EventRequest::CpuClock;
  o.frequency_hz = 999;
  const EventSelection s = select_event(o, ctx);
  // perf -a puts the side-band on a separate dummy event and sets inherit (which the kernel
  // ignores for CPU-wide events); we keep the side-band on the sampling event.
  compare(perf_attr_for({"-a", "-e", "cpu-clock", "-F", "999"}, dir_),
          perf_style(make_sampling_attr(s, TargetKind::SystemWide)),
          {"inherit", "mmap", "mmap2", "comm", "comm_exec", "task"});
}

// ---- Branch-stack engines, one CPU kind at a time --------------------------------------------
// The selection runs as on that CPU (its capabilities, a trial open that succeeds); perf is asked
// for the same thing by hand: `-j any,u[,k]` on cycles for LBR / LbrExtV2 / BRBE, and raw 0xc4
// with a period for AMD BRS. A request with kernel samples uses perf's unmodified event, a
// user-only one its `:u`.

CpuCapabilities branch_cpu(BranchHardware stack, bool brs) {
  CpuCapabilities c;
  c.pmu = "cpu";
  c.branch_stack = stack;
  c.brs = brs;
  return c;
}

EventSelection select_as_on(const CpuCapabilities& cpu, EventOptions o, bool include_kernel) {
  SelectionContext ctx;
  ctx.permissions = include_kernel ? PerfPermissions::from(2, uint64_t{1} << kCapPerfmon, 0)
                                   : PerfPermissions::from(2, 0, 1000);
  ctx.max_sample_rate = 100000;
  ctx.cpu = cpu;
  ctx.probe = [](const perf_event_attr&) { return 0; };
  return select_event(o, ctx);
}

struct BranchCase {
  const char* cpu_kind;
  BranchHardware stack;
  bool brs;
};

TEST_F(EventAttrVsPerf, BranchStackOnCyclesForEachCpuKind) {
  for (const BranchCase& c : {BranchCase{"Intel LBR", BranchHardware::IntelLbr, false},
                              BranchCase{"Intel Arch LBR", BranchHardware::IntelArchLbr, false},
                              BranchCase{"AMD Zen4 LbrExtV2", BranchHardware::AmdLbrV2, false},
                              BranchCase{"Arm BRBE", BranchHardware::ArmBrbe, false}}) {
    for (bool kernel : {true, false}) {
      SCOPED_TRACE(std::string(c.cpu_kind) + (kernel ? ", with kernel" : ", user only"));
      EventOptions o;
      o.event = EventRequest::Lbr;
      const EventSelection s = select_as_on(branch_cpu(c.stack, c.brs), o, kernel);
      ASSERT_EQ(s.engine, SamplingEngine::BranchStack);
      const Fields perf = kernel ? perf_attr_printed_for({"-e", "cycles", "-j", "any,u,k"}, dir_)
                                 : perf_attr_printed_for({"-e", "cycles:u", "-j", "any,u"}, dir_);
      ASSERT_NE(perf.find("branch_sample_type"), perf.end());
      compare(perf, perf_style(make_sampling_attr(s, TargetKind::Command)), {});
      // `auto` takes the same event on this CPU.
      EXPECT_EQ(select_as_on(branch_cpu(c.stack, c.brs), {}, kernel).engine,
                SamplingEngine::BranchStack);
    }
  }
}

TEST_F(EventAttrVsPerf, BranchStackOnCyclesWithAPeriod) {
  EventOptions o;
  o.event = EventRequest::Lbr;
  o.period = 500009;
  const EventSelection s = select_as_on(branch_cpu(BranchHardware::IntelLbr, false), o, false);
  compare(perf_attr_printed_for({"-e", "cycles:u", "-c", "500009", "-j", "any,u"}, dir_),
          perf_style(make_sampling_attr(s, TargetKind::Command)), {"PERIOD"});
}

TEST_F(EventAttrVsPerf, AmdZen3BrsForEachPrivilege) {
  for (bool kernel : {true, false}) {
    SCOPED_TRACE(kernel ? "with kernel" : "user only");
    EventOptions o;
    o.event = EventRequest::Brs;  // the default period
    const EventSelection s = select_as_on(branch_cpu(BranchHardware::None, true), o, kernel);
    ASSERT_EQ(s.engine, SamplingEngine::Brs);
    const std::string period = std::to_string(kDefaultBrsPeriod);
    const Fields perf =
        kernel ? perf_attr_printed_for({"-e", "r0c4", "-c", period, "-j", "any,u,k"}, dir_)
               : perf_attr_printed_for({"-e", "r0c4:u", "-c", period, "-j", "any,u"}, dir_);
    ASSERT_EQ(perf.count("freq"), 0u);
    // perf leaves PERIOD out with a fixed period (see CommandModeUserOnlyByPeriod).
    compare(perf, perf_style(make_sampling_attr(s, TargetKind::Command)), {"PERIOD"});
    // `auto` on Zen3 takes BRS too, with the same attr.
    const EventSelection a = select_as_on(branch_cpu(BranchHardware::None, true), {}, kernel);
    ASSERT_EQ(a.engine, SamplingEngine::Brs);
    compare(perf, perf_style(make_sampling_attr(a, TargetKind::Command)), {"PERIOD"});
  }
}

TEST_F(EventAttrVsPerf, AmdZen3BrsWithAChosenPeriod) {
  EventOptions o;
  o.event = EventRequest::Brs;
  o.period = 20011;
  const EventSelection s = select_as_on(branch_cpu(BranchHardware::None, true), o, false);
  compare(perf_attr_printed_for({"-e", "r0c4:u", "-c", "20011", "-j", "any,u"}, dir_),
          perf_style(make_sampling_attr(s, TargetKind::Command)), {"PERIOD"});
}

// ---- Raw events with perf's own words ---------------------------------------------------------
// `profcollect -e rHEX[:MODS] -b|-j ... -c N [-a]` must ask the kernel for what `perf record` asks
// with the same words, on each CPU kind: the kernel AutoFDO recipe on Intel (BR_INST_RETIRED.
// NEAR_TAKEN = r20c4, kernel only, -b, -c 500009, -a), user-space runs, AMD BRS on r0c4.

// The fields that define what is sampled; each must be equal, none may be waived.
void expect_defining_fields_equal(const Fields& perf, const Fields& ours) {
  for (const char* name :
       {"type", "config", "{ bp_addr, config1 }", "{ bp_len, config2 }",
        "{ sample_period, sample_freq }", "freq", "branch_sample_type", "exclude_user",
        "exclude_kernel", "exclude_hv", "exclude_guest", "precise_ip"}) {
    const auto p = perf.find(name), o = ours.find(name);
    EXPECT_EQ(p == perf.end() ? "(unset)" : p->second, o == ours.end() ? "(unset)" : o->second)
        << name;
  }
  auto branch_stack = [](const Fields& f) {
    const auto t = f.find("sample_type");
    return t != f.end() && t->second.find("BRANCH_STACK") != std::string::npos;
  };
  EXPECT_EQ(branch_stack(perf), branch_stack(ours)) << "BRANCH_STACK in sample_type";
}

struct RawCase {
  const char* cpu_kind;
  CpuCapabilities cpu;
  std::string event;               // -e
  bool any_branch;                 // -b
  std::string filter;              // -j
  std::optional<uint64_t> period;  // -c
  bool system_wide;                // -a
};

TEST_F(EventAttrVsPerf, RawEventsWithBranchStacksForEachCpuKind) {
  const CpuCapabilities intel = branch_cpu(BranchHardware::IntelLbr, false);
  const CpuCapabilities zen3 = branch_cpu(BranchHardware::None, true);
  const CpuCapabilities zen4 = branch_cpu(BranchHardware::AmdLbrV2, true);
  const std::vector<RawCase> cases = {
      {"Intel LBR", intel, "r20c4:k", true, "", 500009, true},
      {"Intel LBR", intel, "r20c4:u", true, "", 100003, false},
      {"Intel LBR", intel, "r20c4:u", true, "", std::nullopt, false},
      {"Intel LBR", intel, "r20c4:ppp", false, "any,u,k", std::nullopt, false},
      {"AMD Zen3 BRS", zen3, "r0c4", false, "any,u", 100003, false},
      {"AMD Zen3 BRS", zen3, "r0c4:k", true, "", 500009, true},
      {"AMD Zen4 LbrExtV2", zen4, "r0c4:u", false, "any,u", std::nullopt, false},
      {"Arm BRBE", branch_cpu(BranchHardware::ArmBrbe, false), "r11", false, "any,u,k", 100003,
       false},
  };
  for (const RawCase& c : cases) {
    std::vector<std::string> args = {"-e", c.event};
    if (c.any_branch) args.push_back("-b");
    if (!c.filter.empty()) args.insert(args.end(), {"-j", c.filter});
    if (c.period) args.insert(args.end(), {"-c", std::to_string(*c.period)});
    if (c.system_wide) args.push_back("-a");
    std::string words;
    for (const auto& a : args) words += " " + a;
    SCOPED_TRACE(std::string(c.cpu_kind) + ":" + words);

    // As the CLI does: -b / -j folded into the -e text, parsed back.
    EventOptions o;
    o.event = parse_event_request(c.event, c.any_branch, c.filter);
    o.period = c.period;
    const EventSelection s = select_as_on(c.cpu, o, /*include_kernel=*/true);
    ASSERT_EQ(s.engine, SamplingEngine::Raw);
    const Fields perf = perf_attr_printed_for(args, dir_);
    ASSERT_NE(perf.find("branch_sample_type"), perf.end());
    const Fields ours = perf_style(
        make_sampling_attr(s, c.system_wide ? TargetKind::SystemWide : TargetKind::Command));
    expect_defining_fields_equal(perf, ours);
    // Everything else as for the named engines: -a moves perf's side-band to a dummy event;
    // with a period perf leaves PERIOD out of the samples.
    std::set<std::string> allowed;
    if (c.period) allowed.insert("PERIOD");
    if (c.system_wide) allowed.insert({"inherit", "mmap", "mmap2", "comm", "comm_exec", "task"});
    compare(perf, ours, allowed);
  }
}

TEST_F(EventAttrVsPerf, RawEventWithoutBranchStack) {
  EventOptions o;
  o.event = parse_event_request("r3c");
  o.frequency_hz = 999;
  const EventSelection s = select_as_on(branch_cpu(BranchHardware::None, false), o, true);
  const Fields perf = perf_attr_printed_for({"-e", "r3c", "-F", "999"}, dir_);
  const Fields ours = perf_style(make_sampling_attr(s, TargetKind::Command));
  expect_defining_fields_equal(perf, ours);
  compare(perf, ours, {});
}

// ---- The side-band split against perf's tracking dummy event --------------------------------
// perf 6.1 moves the side-band to a software dummy event ("dummy:HG") for -a and for -D: the
// sampling event then keeps no mmap/comm/task bit, the dummy has them with sample_period 1 and
// the sampling event's trailer. split_side_band() must ask for the same two events. perf also
// opens a third, system-wide dummy for its BPF side-band thread (bpf_event only), not compared.
// Both at the default rate: given -F, perf gives its dummy that frequency too (freq, PERIOD),
// which for an event that never counts changes nothing; at the default it keeps period 1.

std::vector<Fields> perf_attrs_for(const std::vector<std::string>& args, test::TempDir& dir) {
  std::vector<std::string> argv = {
      "perf", "record", "-vv", "-N", "-B", "-o", (dir / "perf.data").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--", "true"});
  const test::CommandResult r = test::run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
  return parse_attr_blocks(r.err);
}

// Where our dummy differs from perf's on purpose, besides known_differences().
const std::set<std::string> kDummyDifferences = {
    // We copy the sampling event's exclude_guest (perf's dummy:HG leaves guests in); a dummy
    // samples nothing, so it changes no record.
    "exclude_guest",
};

TEST_F(EventAttrVsPerf, SideBandSplitAsPerfsDelayedCommand) {
  SelectionContext ctx = SelectionContext::of_this_process();
  if (!ctx.permissions.may_sample_kernel()) GTEST_SKIP() << "needs kernel samples (root)";
  EventOptions o;
  o.event = EventRequest::CpuClock;
  const EventSelection s = select_event(o, ctx);
  // -D: perf's tracking dummy starts at the exec (enable_on_exec), its sampling event later.
  const std::vector<Fields> perf = perf_attrs_for({"-D", "10", "-e", "cpu-clock"}, dir_);
  ASSERT_GE(perf.size(), 2u) << "perf -D opened no dummy event";
  ASSERT_EQ(perf[1].count("config") ? perf[1].at("config") : "", "0x9")
      << "perf's second event is not a dummy";
  const SideBandAttrs ours = split_side_band(make_sampling_attr(s, TargetKind::Command));
  {
    SCOPED_TRACE("sampling event");
    // perf enables its sampling event after the delay; ours starts at the exec.
    compare(perf[0], perf_style(ours.sampling), {"enable_on_exec"});
  }
  {
    SCOPED_TRACE("dummy event");
    compare(perf[1], perf_style(ours.dummy), kDummyDifferences);
  }
}

TEST_F(EventAttrVsPerf, SideBandSplitAsPerfsSystemWide) {
  SelectionContext ctx = SelectionContext::of_this_process();
  if (!ctx.permissions.may_sample_cpus() || !ctx.permissions.may_sample_kernel())
    GTEST_SKIP() << "needs CAP_PERFMON for -a";
  EventOptions o;
  o.event = EventRequest::CpuClock;
  const EventSelection s = select_event(o, ctx);
  const std::vector<Fields> perf = perf_attrs_for({"-a", "-e", "cpu-clock"}, dir_);
  ASSERT_GE(perf.size(), 2u) << "perf -a opened no dummy event";
  ASSERT_EQ(perf[1].count("config") ? perf[1].at("config") : "", "0x9")
      << "perf's second event is not a dummy";
  const SideBandAttrs ours = split_side_band(make_sampling_attr(s, TargetKind::SystemWide));
  std::set<std::string> dummy_allowed = kDummyDifferences;
  // perf sets inherit on CPU-wide events (the kernel ignores it there) and opens its -a dummy
  // enabled; ours is opened disabled and enabled with the sampling event once every buffer is
  // mapped.
  dummy_allowed.insert({"inherit", "disabled"});
  {
    SCOPED_TRACE("sampling event");
    compare(perf[0], perf_style(ours.sampling), {"inherit"});
  }
  {
    SCOPED_TRACE("dummy event");
    compare(perf[1], perf_style(ours.dummy), dummy_allowed);
  }
}

}  // namespace
}  // namespace profcollect
