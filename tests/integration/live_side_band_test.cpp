// The side-band dummy event on this machine's kernel (cpu-clock, as root).
//
// First the events alone (PerfEventSet + LiveRecordSource), on a program started held before its
// exec, so that every mapping must come from the kernel: the sampling event stripped of its
// side-band bits gives samples and no MMAP2 or COMM at all; with the dummy event redirected into
// the same per-CPU buffers the exec's COMM and MMAP2 (with the build-id readelf reads) come back
// and the samples land in the program; and a sampling event opened without any ring buffer beside
// a dummy that owns the buffers (the BPF engine's layout) gives the side-band and no sample.
//
// Then the whole session library (CollectionSession with the perf engine) on live_spawner, which
// only after the attach starts two threads, forks a child and dlopens a library, each running
// its own hot function for the same amount of its own CPU time: with the side-band on the dummy
// event the same binaries are profiled as with the default, with no sample unmapped for lack of
// a mapping and every hot function present, in the library too. The library's mapping and the
// child's can only have come from the kernel's MMAP2 and FORK records after the attach (no
// record was lost, so nothing was read again from /proc), and in that run the sampling event
// asks for none of them: the dummy carried them.
#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <set>
#include <thread>

#include "collector/session/collection_session.h"
#include "collector/live/event_selection.h"
#include "collector/live/live_record_source.h"
#include "collector/host/mmap_budget.h"
#include "collector/host/online_cpus.h"
#include "collector/live/perf_engine.h"
#include "collector/live/perf_event_set.h"
#include "collector/records/side_band_attr.h"
#include "tests/integration/busy_program.h"
#include "tests/integration/cpu_time.h"
#include "tests/integration/live_support.h"
#include "tests/integration/quiet_logger.h"

namespace profcollect {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::QuietLogger;

std::optional<BuildId> readelf_build_id_of(const fs::path& file) {
  const std::string hex = test::readelf_build_id(file);
  if (hex.empty()) return std::nullopt;
  return BuildId::from_hex(hex);
}

// What one run of the busy program gave.
struct Observed {
  uint64_t samples = 0;
  uint64_t samples_in_exe = 0;  // user samples inside a kernel MMAP2 of the program
  uint64_t user_samples = 0;
  uint64_t mmap_records = 0;  // MMAP/MMAP2 records of the child, all from the kernel
  bool exe_mapped = false;    // an executable MMAP2 of the program
  BuildId exe_build_id;
  bool exec_comm = false;  // the exec's COMM
  uint64_t comm_records = 0;
  uint64_t malformed = 0;
  uint64_t out_of_order = 0;
};

class LiveSideBandEvents : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    exe_ = test::build_busy_program(dir_.path(), error);
    if (exe_.empty()) GTEST_SKIP() << "cannot build the test program: " << error;
    context_ = SelectionContext::of_this_process();
    EventOptions o;
    o.event = EventRequest::CpuClock;
    selection_ = select_event(o, context_);
    perf_event_attr whole = make_sampling_attr(selection_, TargetKind::Command);
    whole.use_clockid = 1;
    whole.clockid = CLOCK_MONOTONIC;
    split_ = split_side_band(whole);
  }

  // Opens `members` for the program held before its exec, lets it run `cpu` of its own CPU
  // time (cpu-clock samples only that, however loaded the machine), and reads everything.
  Observed run(std::vector<EventSetMember> members, std::unique_ptr<PerfEventSet>* keep = nullptr) {
    Observed o;
    test::ChildProcess child = test::ChildProcess::held_before_exec(exe_);
    const auto pid = static_cast<uint32_t>(child.pid());
    EventSetOptions options;
    options.mmap_pages =
        choose_mmap_pages(LockBudget::of_this_process(context_.permissions),
                          static_cast<uint32_t>(online_cpus().size()), std::nullopt);
    auto events = std::make_unique<PerfEventSet>(
        std::move(members), CollectionTarget{TargetKind::Command, {child.pid()}}, options,
        context_.permissions);
    LiveRecordSource source(*events);
    child.release();  // the exec enables every event (enable_on_exec)
    EXPECT_TRUE(child.wait_for_exec(exe_));
    EXPECT_TRUE(test::wait_for_cpu_time(child.pid(), 100ms, test::kPatience));
    source.drain();
    source.finish();

    std::vector<MmapRecord> maps;  // valid until the next next(): only numbers are kept
    std::vector<std::pair<uint64_t, uint64_t>> exe_ranges;
    std::vector<uint64_t> user_ips;
    uint64_t last = 0;
    Record r;
    while (source.next(r)) {
      const uint64_t t = RecordDecoder::time_of(r);
      if (t != 0 && t != kNoTime) {
        if (t < last) ++o.out_of_order;
        last = t;
      }
      if (const auto* s = std::get_if<SampleRecord>(&r)) {
        ++o.samples;
        if (s->pid == pid && s->cpumode == CpuMode::User) user_ips.push_back(s->ip);
      } else if (const auto* m = std::get_if<MmapRecord>(&r)) {
        if (m->pid != pid) continue;
        ++o.mmap_records;
        if (m->is_mmap2 && m->executable && m->filename == exe_.string()) {
          o.exe_mapped = true;
          o.exe_build_id = m->build_id;
          exe_ranges.emplace_back(m->start, m->len);
        }
      } else if (const auto* c = std::get_if<CommRecord>(&r)) {
        if (c->pid != pid) continue;
        ++o.comm_records;
        o.exec_comm |= c->exec && c->comm == "busy";
      }
    }
    o.user_samples = user_ips.size();
    for (uint64_t ip : user_ips)
      for (auto [start, len] : exe_ranges)
        if (ip >= start && ip - start < len) {
          ++o.samples_in_exe;
          break;
        }
    o.malformed = source.counters().malformed;
    if (keep) *keep = std::move(events);
    return o;
  }

  test::TempDir dir_;
  fs::path exe_;
  SelectionContext context_;
  EventSelection selection_;
  SideBandAttrs split_;
};

// 100 ms of the program's CPU time at 4000 Hz are 400 timer periods; a sample can come late (a
// timer delayed by the hypervisor), never early, so a fifth of them is a safe floor.
constexpr uint64_t kSampleFloor = 80;

TEST_F(LiveSideBandEvents, SamplingEventWithoutSideBandBitsGivesSamplesAndNoMappings) {
  const Observed o = run({{split_.sampling, selection_.name, EventOutput::RingBuffer}});
  EXPECT_GE(o.samples, kSampleFloor);
  EXPECT_EQ(o.mmap_records, 0u) << "the sampling event asks for no MMAP records";
  EXPECT_EQ(o.comm_records, 0u) << "the sampling event asks for no COMM records";
  EXPECT_EQ(o.malformed, 0u);
}

TEST_F(LiveSideBandEvents, DummyRedirectedIntoTheSameBuffersBringsTheMappingsBack) {
  std::unique_ptr<PerfEventSet> events;
  const Observed o = run({{split_.sampling, selection_.name, EventOutput::RingBuffer},
                          {split_.dummy, "dummy", EventOutput::RingBuffer}},
                         &events);
  const size_t cpus = online_cpus().size();
  EXPECT_EQ(events->member_count(), 2u);
  EXPECT_EQ(events->event_count(), 2 * cpus);
  EXPECT_EQ(events->pollable_fds().size(), cpus) << "one buffer per CPU, shared by both events";
  EXPECT_EQ(events->ids(0).size(), cpus);
  EXPECT_EQ(events->ids(1).size(), cpus);

  EXPECT_TRUE(o.exec_comm) << "no COMM with the exec flag for the program";
  ASSERT_TRUE(o.exe_mapped) << "no MMAP2 of " << exe_;
  if (events->member(1).attr.build_id) {
    if (const auto expected = readelf_build_id_of(exe_)) {
      EXPECT_EQ(o.exe_build_id, *expected)
          << o.exe_build_id.to_hex() << " vs readelf " << expected->to_hex();
    }
  }
  EXPECT_GE(o.samples, kSampleFloor);
  // The program spins in its own code: nearly every user sample is in it.
  EXPECT_GE(o.samples_in_exe, o.user_samples * 9 / 10)
      << o.samples_in_exe << " of " << o.user_samples;
  EXPECT_EQ(o.malformed, 0u);
  EXPECT_EQ(o.out_of_order, 0u);
}

TEST_F(LiveSideBandEvents, SamplingEventWithoutABufferBesideADummyThatOwnsThem) {
  std::unique_ptr<PerfEventSet> events;
  const Observed o = run({{split_.sampling, selection_.name, EventOutput::None},
                          {split_.dummy, "dummy", EventOutput::RingBuffer}},
                         &events);
  const size_t cpus = online_cpus().size();
  EXPECT_EQ(events->event_count(), 2 * cpus);
  EXPECT_EQ(events->pollable_fds().size(), cpus) << "the dummy maps one buffer per CPU";
  EXPECT_EQ(events->ids(0).size(), cpus) << "the sampling event is opened all the same";
  EXPECT_EQ(o.samples, 0u) << "a sampling event without a buffer writes nowhere we read";
  EXPECT_TRUE(o.exec_comm);
  EXPECT_TRUE(o.exe_mapped);
  EXPECT_EQ(o.malformed, 0u);
}

// ---- The session library ---------------------------------------------------------------------

struct SessionRun {
  PipelineCounts counts;
  std::vector<perf_event_attr> attrs;  // as the engine opened them
  uint64_t lost_records = 0;
  std::set<std::string> profile_dirs;
  std::map<std::string, uint64_t> per_function;  // over both binaries' bolt.fdata
  uint64_t fdata_total = 0;
  std::string log;
};

class LiveSideBandSession : public test::LiveFixtureTest {
 protected:
  // live_spawner profiled by --pid through CollectionSession, with the side-band on `side_band`.
  SessionRun run(SideBand side_band) {
    SessionRun out;
    const fs::path spawner = fixture("live_spawner"), library = fixture("liblive_plug.so");
    test::TempDir tmp;
    const fs::path go = tmp / "go", dir = tmp / "out";
    // Each worker runs 0.5 s of its own CPU time once `go` exists (live_spawner.c).
    test::BackgroundProcess target =
        test::start_target(spawner, {go.string(), library.string(), "0.5"});

    SessionSettings settings;
    settings.target = CollectionTarget{TargetKind::Processes, {target.pid()}};
    settings.event = "cpu-clock";
    settings.output_dir = dir.string();
    settings.binaries = {spawner.string(), library.string()};
    QuietLogger logger;
    EventOptions eo;
    eo.event = EventRequest::CpuClock;
    const EventSelection selection = select_event(eo, SelectionContext::of_this_process());
    PerfEngineOptions po;
    po.target = settings.target;
    po.side_band = side_band;
    auto engine = std::make_unique<PerfEngine>(selection, po);
    out.attrs = engine->opened_attrs();
    CollectionSession session(settings, logger, std::move(engine));
    session.start();
    test::write_file(go, "");
    // The owner's event loop: wait on the buffers, drain when readable and every 100 ms.
    const auto deadline = std::chrono::steady_clock::now() + test::kPatience;
    while (session.targets_alive() && std::chrono::steady_clock::now() < deadline) {
      std::vector<pollfd> fds;
      for (int fd : session.descriptors()) fds.push_back(pollfd{fd, POLLIN, 0});
      ::poll(fds.data(), fds.size(), 100);
      session.drain();
    }
    EXPECT_FALSE(session.targets_alive()) << "live_spawner did not finish";
    EXPECT_TRUE(session.stop());
    out.counts = session.counts();
    const nlohmann::json collection = test::read_json_file(dir / "collection.json");
    EXPECT_FALSE(collection.is_discarded());
    if (!collection.is_discarded())
      out.lost_records = collection.at("lost_records").get<uint64_t>();
    for (const fs::path& binary : {spawner, library}) {
      for (const fs::path& d : test::profile_dirs(dir, binary.filename().string())) {
        out.profile_dirs.insert(d.filename().string());
        const test::StrictFdata fdata = test::read_fdata_strictly(d / "bolt.fdata");
        EXPECT_TRUE(fdata.valid()) << fdata.error;
        for (const auto& [function, n] : fdata.per_function()) out.per_function[function] += n;
        out.fdata_total += fdata.total();
      }
    }
    for (const auto& m : logger.messages) out.log += m + "\n";
    const auto status = target.wait(test::kPatience);
    EXPECT_TRUE(status && *status == 0) << target.describe();
    return out;
  }
};

std::string describe(const SessionRun& r) {
  std::string s = "samples " + std::to_string(r.counts.samples) + ", mapped " +
                  std::to_string(r.counts.outcomes[SampleOutcome::Mapped]) + ", unmapped:";
  for (size_t i = 1; i < kSampleOutcomeCount; ++i)
    s += " " + std::string(outcome_name(static_cast<SampleOutcome>(i))) + " " +
         std::to_string(r.counts.outcomes.counts[i]);
  s += "; functions:";
  for (const auto& [f, n] : r.per_function) s += " " + f + " " + std::to_string(n);
  return s + "\n" + r.log;
}

TEST_F(LiveSideBandSession, DummyEventMapsTheProgramAndItsLibraryAsTheSamplingEventDoes) {
  const SessionRun plain = run(SideBand::SamplingEvent);
  const SessionRun side = run(SideBand::DummyEvent);

  // What each run asked the kernel for.
  ASSERT_EQ(plain.attrs.size(), 1u);
  EXPECT_EQ(plain.attrs[0].mmap2, 1u);
  ASSERT_EQ(side.attrs.size(), 2u);
  const perf_event_attr& sampling = side.attrs[0];
  EXPECT_EQ(sampling.mmap + sampling.mmap2 + sampling.comm + sampling.task, 0u)
      << "the sampling event carries no side-band in the dummy-event mode";
  const perf_event_attr& dummy = side.attrs[1];
  EXPECT_EQ(dummy.type, uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(dummy.config, uint64_t{PERF_COUNT_SW_DUMMY});
  EXPECT_EQ(dummy.mmap2 & dummy.comm & dummy.task, 1u);

  for (const SessionRun* r : {&plain, &side}) {
    SCOPED_TRACE(r == &plain ? "side-band on the sampling event" : "side-band on a dummy event");
    // No record lost, so no mapping was read again from /proc after the attach: the library's
    // and the child's came from the kernel's records.
    ASSERT_EQ(r->lost_records, 0u) << describe(*r);
    EXPECT_EQ(r->counts.outcomes[SampleOutcome::NoMapping], 0u) << describe(*r);
    EXPECT_EQ(r->counts.outcomes[SampleOutcome::NotExecutable], 0u) << describe(*r);
    EXPECT_EQ(r->counts.outcomes[SampleOutcome::BuildIdMismatch], 0u) << describe(*r);
    // 4 x 0.5 s of CPU time at 4000 Hz are 8000 periods; a fifth is a floor a late timer keeps.
    EXPECT_GE(r->counts.samples, 1600u) << describe(*r);
    // The workers spin in the two binaries; the rest (kernel entries for clone, fork, dlopen,
    // libc, the vDSO's clock) is a few percent.
    EXPECT_GE(r->counts.outcomes[SampleOutcome::Mapped], r->counts.samples * 3 / 4) << describe(*r);
    // Each hot function runs a quarter of the CPU time (thread_work half); a tenth shows it was
    // followed: the threads, the forked child and the dlopened library.
    for (const char* function : {"thread_work", "child_work", "plug_work"})
      EXPECT_GE(test::points(r->per_function.count(function) ? r->per_function.at(function) : 0,
                             r->fdata_total),
                10.0)
          << function << "\n"
          << describe(*r);
  }
  // The same binaries, under the same build-ids.
  EXPECT_EQ(plain.profile_dirs.size(), 2u);
  EXPECT_EQ(side.profile_dirs, plain.profile_dirs);
}

}  // namespace
}  // namespace profcollect
