// Live collection on this machine's kernel (cpu-clock, as root): events opened for a running
// program (--pid) and for a program started held before its exec (command mode), records read
// from the ring buffers until the program has run 250 ms of CPU time (cpu-clock is opened per
// task: it samples the program's own CPU time, however loaded the machine is). The samples must
// land in the executable mapping of the program's binary that the MMAP2 records (synthesized
// from /proc, or the kernel's with the build-id readelf reads from the file) describe, in time
// order. A one-page buffer left undrained while the program runs must overrun and say so with
// PERF_RECORD_LOST, and no more records can be read or lost than the kernel's timer periods.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include "collector/live/event_selection.h"
#include "collector/live/live_record_source.h"
#include "collector/host/mmap_budget.h"
#include "collector/host/online_cpus.h"
#include "collector/live/perf_event_set.h"
#include "tests/integration/busy_program.h"
#include "tests/integration/cpu_time.h"
#include "tests/integration/test_support.h"

namespace profcollect {
namespace {

using namespace std::chrono_literals;

struct SampleCopy {
  uint32_t pid;
  uint64_t ip;
  CpuMode mode;
};
struct MmapCopy {
  uint32_t pid;
  uint64_t start, len, time;
  bool executable;
  std::string filename;
  BuildId build_id;
};
struct CommCopy {
  uint32_t pid, tid;
  bool exec;
  std::string comm;
};

struct Collected {
  std::vector<SampleCopy> samples;
  std::vector<MmapCopy> mmaps;
  std::vector<CommCopy> comms;
  size_t lost_records_seen = 0;
  uint64_t lost_seen = 0;  // what those LOST records say was lost
  size_t out_of_order = 0;
  size_t records = 0;

  void take(LiveRecordSource& source) {
    Record r;
    while (source.next(r)) {
      ++records;
      const uint64_t t = RecordDecoder::time_of(r);
      if (t != 0 && t != kNoTime) {
        if (t < last_time_) ++out_of_order;
        last_time_ = t;
      }
      if (const auto* s = std::get_if<SampleRecord>(&r)) {
        samples.push_back({s->pid, s->ip, s->cpumode});
      } else if (const auto* m = std::get_if<MmapRecord>(&r)) {
        mmaps.push_back({m->pid, m->start, m->len, m->time, m->executable, std::string(m->filename),
                         m->build_id});
      } else if (const auto* c = std::get_if<CommRecord>(&r)) {
        comms.push_back({c->pid, c->tid, c->exec, std::string(c->comm)});
      } else if (const auto* l = std::get_if<LostRecord>(&r); l && !l->is_lost_samples) {
        ++lost_records_seen;
        lost_seen += l->lost;
      }
    }
  }

  // Samples of `pid`, and how many of them fall in an executable mapping of `file` of that pid.
  std::pair<size_t, size_t> samples_in(uint32_t pid, const std::string& file) const {
    size_t total = 0, inside = 0;
    for (const SampleCopy& s : samples) {
      if (s.pid != pid || s.mode != CpuMode::User) continue;
      ++total;
      for (const MmapCopy& m : mmaps)
        if (m.pid == pid && m.executable && m.filename == file && s.ip >= m.start &&
            s.ip - m.start < m.len) {
          ++inside;
          break;
        }
    }
    return {total, inside};
  }

 private:
  uint64_t last_time_ = 0;
};

// Drains every 100 ms until process `pid` has run `cpu` more CPU time (a loaded machine gives
// it less of each second, and cpu-clock samples only the time it runs), then once more, and
// finishes. False when that did not happen within test::kPatience.
bool collect(LiveRecordSource& source, Collected& out, pid_t pid, std::chrono::milliseconds cpu) {
  const std::optional<std::chrono::nanoseconds> start = test::process_cpu_time(pid);
  const auto deadline = std::chrono::steady_clock::now() + test::kPatience;
  bool ran = false;
  while (start && !ran && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
    source.drain();
    out.take(source);
    const std::optional<std::chrono::nanoseconds> now = test::process_cpu_time(pid);
    ran = now && *now - *start >= cpu;
  }
  source.drain();
  source.finish();
  out.take(source);
  return ran;
}

// Timer periods of 250 us (4000 Hz) in the 250 ms of CPU time collect() waits for.
constexpr size_t kPeriodsCollected = 1000;

std::optional<BuildId> readelf_build_id(const std::filesystem::path& file) {
  const std::vector<std::string> argv = {"readelf", "-n", file.string()};
  const test::CommandResult r = test::run_command(argv);
  for (const std::string& line : test::split_lines(r.out)) {
    const size_t at = line.find("Build ID: ");
    if (at != std::string::npos) return BuildId::from_hex(line.substr(at + 10));
  }
  return std::nullopt;
}

class LiveCollection : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    exe_ = test::build_busy_program(dir_.path(), error);
    if (exe_.empty()) GTEST_SKIP() << "cannot build the test program: " << error;
    context_ = SelectionContext::of_this_process();
    EventOptions o;
    o.event = EventRequest::CpuClock;
    selection_ = select_event(o, context_);
  }

  std::unique_ptr<PerfEventSet> open(const CollectionTarget& target,
                                     std::optional<uint64_t> pages = std::nullopt) {
    const perf_event_attr attr = make_sampling_attr(selection_, target.kind);
    EventSetOptions options;
    options.mmap_pages = choose_mmap_pages(LockBudget::of_this_process(context_.permissions),
                                           static_cast<uint32_t>(online_cpus().size()), pages);
    options.event_name = selection_.name;
    return std::make_unique<PerfEventSet>(attr, target, options, context_.permissions);
  }

  test::TempDir dir_;
  std::filesystem::path exe_;
  SelectionContext context_;
  EventSelection selection_;
};

TEST_F(LiveCollection, RunningProcessSamplesLandInItsBinaryFromProcMaps) {
  test::ChildProcess child = test::ChildProcess::spawn(exe_);
  ASSERT_TRUE(child.wait_for_exec(exe_));
  const auto pid = static_cast<uint32_t>(child.pid());

  auto events = open({TargetKind::Processes, {child.pid()}});
  const size_t cpus = online_cpus().size();
  EXPECT_EQ(events->thread_count(), 1u);
  EXPECT_EQ(events->event_count(), cpus);
  EXPECT_EQ(events->pollable_fds().size(), cpus);
  EXPECT_EQ(events->ids().size(), cpus);

  LiveRecordSource source(*events, selection_.name);
  EXPECT_EQ(source.pollable_fds(), events->pollable_fds());
  events->enable();
  ASSERT_TRUE(source.add_existing_process(child.pid()));
  Collected got;
  ASSERT_TRUE(collect(source, got, child.pid(), 250ms))
      << "the program did not run 250 ms of CPU time";

  // The binary's mapping came from /proc (untimed, synthesized), before any sample.
  size_t synthesized_exe_maps = 0;
  for (const MmapCopy& m : got.mmaps)
    if (m.pid == pid && m.filename == exe_.string() && m.executable && m.time == 0)
      ++synthesized_exe_maps;
  EXPECT_GE(synthesized_exe_maps, 1u);
  EXPECT_GE(source.counters().synthesized, 2u);
  bool comm_seen = false;
  for (const CommCopy& c : got.comms) comm_seen |= c.pid == pid && c.comm == "busy";
  EXPECT_TRUE(comm_seen);

  const auto [total, inside] = got.samples_in(pid, exe_.string());
  // A fifth of the timer periods: a sample can only come late (a timer delayed by the
  // hypervisor), never early.
  EXPECT_GE(total, kPeriodsCollected / 5)
      << "250 ms of its CPU time at 4000 Hz are 1000 timer periods";
  EXPECT_GE(inside, total * 9 / 10) << inside << " of " << total << " samples in " << exe_;
  EXPECT_EQ(got.out_of_order, 0u);
  EXPECT_EQ(source.counters().samples, got.samples.size());
  EXPECT_EQ(source.counters().lost_records, 0u);
  EXPECT_EQ(source.counters().malformed, 0u);
  EXPECT_EQ(source.counters().skipped_bytes, 0u);

  // The events hang up once the process is gone: how the event loop knows the target ended.
  EXPECT_EQ(events->live_event_count(), cpus);
  child.kill_and_reap();
  EXPECT_EQ(events->live_event_count(), 0u);
}

TEST_F(LiveCollection, CommandStartsAtExecWithKernelMmap2CarryingTheBuildId) {
  test::ChildProcess child = test::ChildProcess::held_before_exec(exe_);
  const auto pid = static_cast<uint32_t>(child.pid());
  auto events = open({TargetKind::Command, {child.pid()}});
  LiveRecordSource source(*events, selection_.name);
  child.release();  // exec: enable_on_exec starts the events
  ASSERT_TRUE(child.wait_for_exec(exe_));
  Collected got;
  ASSERT_TRUE(collect(source, got, child.pid(), 250ms))
      << "the program did not run 250 ms of CPU time";

  bool exec_comm = false;
  for (const CommCopy& c : got.comms) exec_comm |= c.pid == pid && c.exec && c.comm == "busy";
  EXPECT_TRUE(exec_comm) << "no COMM with the exec flag for the child";

  const MmapCopy* kernel_map = nullptr;
  for (const MmapCopy& m : got.mmaps)
    if (m.pid == pid && m.filename == exe_.string() && m.executable && m.time != 0 &&
        m.time != kNoTime)
      kernel_map = &m;
  ASSERT_NE(kernel_map, nullptr) << "no MMAP2 of " << exe_ << " from the kernel";
  if (events->attr().build_id) {
    const auto expected = readelf_build_id(exe_);
    if (expected) {
      EXPECT_FALSE(kernel_map->build_id.empty());
      EXPECT_EQ(kernel_map->build_id, *expected)
          << kernel_map->build_id.to_hex() << " vs readelf " << expected->to_hex();
    }
  }
  const auto [total, inside] = got.samples_in(pid, exe_.string());
  EXPECT_GE(total, kPeriodsCollected / 5);
  EXPECT_GE(inside, total * 9 / 10) << inside << " of " << total;
  EXPECT_EQ(got.out_of_order, 0u);
  EXPECT_EQ(source.counters().synthesized, 0u);
}

// The highest rate the kernel accepts now (perf_event_max_sample_rate, which it lowers by itself
// when sampling interrupts take too long), at most `wanted`.
uint64_t allowed_rate(uint64_t wanted) {
  std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
  uint64_t max = 0;
  return in >> max && max > 0 && max < wanted ? max : wanted;
}

TEST_F(LiveCollection, OnePageBufferOverrunsAndCountsTheLoss) {
  test::ChildProcess child = test::ChildProcess::spawn(exe_);
  ASSERT_TRUE(child.wait_for_exec(exe_));
  EventOptions o;
  o.event = EventRequest::CpuClock;
  o.frequency_hz = allowed_rate(20000);
  selection_ = select_event(o, context_);
  auto events = open({TargetKind::Processes, {child.pid()}}, /*pages=*/1);
  EXPECT_EQ(events->mmap_pages(), 1u);
  LiveRecordSource source(*events, selection_.name);
  events->enable();
  source.add_existing_process(child.pid());
  // No drain while the child runs 100 ms of CPU time: 2000 timer periods of its cpu-clock at
  // 20 kHz, while a 4 KiB page per CPU holds about 70 samples. So the kernel must drop records,
  // however loaded the machine; it says how many in a LOST record written at its first record
  // after the next drain. A window is doubled until a LOST record has come (a kernel that
  // throttles the event may write far fewer samples than periods).
  Collected got;
  const auto deadline = std::chrono::steady_clock::now() + test::kPatience;
  for (auto window = 100ms;
       source.counters().lost_records == 0 && std::chrono::steady_clock::now() < deadline;
       window *= 2) {
    ASSERT_TRUE(test::wait_for_cpu_time(child.pid(), window, test::kPatience))
        << "the child stopped running";
    source.drain();
    got.take(source);
  }
  // Room again: the next records (the LOST record among them) are read.
  ASSERT_TRUE(test::wait_for_cpu_time(child.pid(), 10ms, test::kPatience));
  source.drain();
  source.finish();
  got.take(source);

  EXPECT_GE(source.counters().lost_records, 1u)
      << "no PERF_RECORD_LOST from a one-page buffer left full";
  EXPECT_GE(source.counters().lost_samples, source.counters().lost_records)
      << "a LOST record says 0 were lost";
  EXPECT_EQ(got.lost_records_seen, source.counters().lost_records);
  EXPECT_EQ(got.lost_seen, source.counters().lost_samples);
  EXPECT_GT(got.samples.size(), 0u);
  EXPECT_EQ(source.counters().samples, got.samples.size());
  EXPECT_EQ(got.out_of_order, 0u);

  // What the kernel says: each event's count is the child's CPU time on that CPU in ns, and its
  // timer fires once per period of it at most. Every sample it tried to write was either read
  // or counted lost, so together they cannot exceed the periods (plus one per event, 1% for the
  // two clocks the kernel uses, and one UNTHROTTLE record per tick of at least 1 ms should the
  // kernel throttle the event).
  uint64_t ns = 0;
  for (const int fd : events->pollable_fds()) {
    uint64_t count = 0;
    ASSERT_EQ(::read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
    ns += count;
  }
  const uint64_t periods = ns / (1000000000 / *o.frequency_hz);
  const uint64_t written = source.counters().samples + source.counters().lost_samples;
  EXPECT_LE(written, periods + periods / 100 + ns / 1000000 + events->event_count())
      << source.counters().samples << " samples read and " << source.counters().lost_samples
      << " lost, but the child ran only " << ns << " ns (" << periods << " periods)";
}

TEST_F(LiveCollection, ProcessThatDoesNotExist) {
  pid_t gone;
  {
    test::ChildProcess child = test::ChildProcess::spawn(exe_);
    gone = child.pid();
  }  // killed and reaped: the pid names nothing now
  try {
    open({TargetKind::Processes, {gone}});
    FAIL() << "opened events for a dead process";
  } catch (const PerfEventError& e) {
    EXPECT_EQ(e.kind(), PerfEventError::Kind::NoProcess);
    EXPECT_EQ(std::string(e.what()), "no process " + std::to_string(gone));
  }
}

}  // namespace
}  // namespace profcollect
