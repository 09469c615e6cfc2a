// /proc/PID/maps lines into ProcMapsEntry, and the raw MMAP2/COMM records made from them, read
// back through the same RecordDecoder as the kernel's records.
#include "collector/host/proc_maps.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <filesystem>

#include "collector/live/event_selection.h"
#include "collector/records/perf_attr.h"
#include "collector/records/perf_session_state.h"
#include "collector/host/proc_tasks.h"
#include "collector/live/process_synthesizer.h"
#include "collector/records/raw_record_reader.h"
#include "collector/records/record_decoder.h"
#include "collector/live/synthetic_records.h"

namespace profcollect {
namespace {

TEST(ProcMaps, ParsesAnExecutableFileMapping) {
  auto e = parse_proc_maps_line(
      "55d0c1a00000-55d0c1a21000 r-xp 00002000 fd:01 1054742                    /usr/bin/cat");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->start, 0x55d0c1a00000u);
  EXPECT_EQ(e->end, 0x55d0c1a21000u);
  EXPECT_EQ(e->pgoff, 0x2000u);
  EXPECT_EQ(e->prot, uint32_t{PROT_READ | PROT_EXEC});
  EXPECT_EQ(e->flags, uint32_t{MAP_PRIVATE});
  EXPECT_EQ(e->maj, 0xfdu);
  EXPECT_EQ(e->min, 1u);
  EXPECT_EQ(e->ino, 1054742u);
  EXPECT_EQ(e->path, "/usr/bin/cat");
  EXPECT_TRUE(e->executable());
}

TEST(ProcMaps, ParsesAnonymousSharedAndSpecialMappings) {
  auto anon = parse_proc_maps_line("7f1c2c000000-7f1c2c021000 rw-p 00000000 00:00 0 ");
  ASSERT_TRUE(anon);
  EXPECT_EQ(anon->path, "");
  EXPECT_EQ(anon->prot, uint32_t{PROT_READ | PROT_WRITE});
  EXPECT_FALSE(anon->executable());

  auto bare = parse_proc_maps_line("7f1c2c000000-7f1c2c021000 ---p 00000000 00:00 0");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->prot, 0u);
  EXPECT_EQ(bare->path, "");

  auto shared = parse_proc_maps_line(
      "7f1c2d400000-7f1c2d500000 rwxs 00100000 00:05 393231                     /dev/zero "
      "(deleted)");
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->flags, uint32_t{MAP_SHARED});
  EXPECT_EQ(shared->prot, uint32_t{PROT_READ | PROT_WRITE | PROT_EXEC});
  EXPECT_EQ(shared->pgoff, 0x100000u);
  EXPECT_EQ(shared->maj, 0u);
  EXPECT_EQ(shared->min, 5u);

  auto vdso = parse_proc_maps_line(
      "7ffe4b9f2000-7ffe4b9f4000 r-xp 00000000 00:00 0                          [vdso]");
  ASSERT_TRUE(vdso);
  EXPECT_EQ(vdso->path, "[vdso]");
  EXPECT_TRUE(vdso->executable());

  // Devices above 255 print with more hex digits.
  auto bigdev = parse_proc_maps_line("1000-2000 r-xp 00000000 103:1a2 77 /x");
  ASSERT_TRUE(bigdev);
  EXPECT_EQ(bigdev->maj, 0x103u);
  EXPECT_EQ(bigdev->min, 0x1a2u);
}

TEST(ProcMaps, KeepsDeletedMarkersSpacesAndEscapedNewlinesInNames) {
  auto deleted = parse_proc_maps_line(
      "7f00aa000000-7f00aa010000 r-xp 00001000 08:02 4242                       /tmp/old binary "
      "(deleted)");
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->path, "/tmp/old binary (deleted)");

  auto spaces =
      parse_proc_maps_line("400000-401000 r-xp 00000000 08:02 17 /opt/my  app/bin/a b  c");
  ASSERT_TRUE(spaces);
  EXPECT_EQ(spaces->path, "/opt/my  app/bin/a b  c");

  auto newline = parse_proc_maps_line("400000-401000 r-xp 00000000 08:02 17 /tmp/a\\012b\n");
  ASSERT_TRUE(newline);
  EXPECT_EQ(newline->path, "/tmp/a\nb");
}

TEST(ProcMaps, RejectsLinesThatAreNotMaps) {
  for (const char* line :
       {"", "garbage", "400000 r-xp 00000000 08:02 17 /x", "400000-401000 r-x 00000000 08:02 17",
        "400000-401000 r-xq 00000000 08:02 17 /x", "401000-400000 r-xp 00000000 08:02 17 /x",
        "400000-401000 r-xp 0000zz00 08:02 17 /x", "400000-401000 r-xp 00000000 0802 17 /x",
        "400000-401000 r-xp 00000000 08:02 abc /x"})
    EXPECT_FALSE(parse_proc_maps_line(line)) << line;
}

TEST(ProcMaps, ParsesAWholeFileSkippingBadLines) {
  auto entries = parse_proc_maps(
      "1000-2000 r-xp 00000000 08:02 17 /a\n"
      "junk\n"
      "3000-4000 rw-p 00001000 08:02 17 /a\n");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].start, 0x3000u);
}

__attribute__((noinline)) int code_in_this_binary() { return ::getpid(); }

// An independent view of this process: the code of this function lies in an executable mapping
// of the test binary (the file /proc/self/exe names).
TEST(ProcMaps, OwnProcessHasThisFunctionInAnExecutableMappingOfItsBinary) {
  auto maps = read_proc_maps(::getpid());
  ASSERT_TRUE(maps);
  const auto here = reinterpret_cast<uint64_t>(&code_in_this_binary);
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  bool found = false;
  for (const ProcMapsEntry& e : *maps)
    if (here >= e.start && here < e.end) {
      EXPECT_TRUE(e.executable());
      EXPECT_EQ(e.path, exe);
      found = true;
    }
  EXPECT_TRUE(found);
  EXPECT_FALSE(read_proc_maps(-5));
}

TEST(ProcTasks, ListsOwnThreadsMainFirst) {
  auto tids = list_threads(::getpid());
  ASSERT_FALSE(tids.empty());
  EXPECT_EQ(tids[0], ::getpid());
  EXPECT_TRUE(list_threads(-5).empty());
  auto comm = read_thread_comm(::getpid(), ::getpid());
  ASSERT_TRUE(comm);
  EXPECT_FALSE(comm->empty());
  EXPECT_EQ(process_owner(::getpid()), ::getuid());
}

// The attr LiveRecordSource uses, registered in a session state like the live source does.
struct DecodeFixture {
  DecodeFixture() {
    EventSelection s;
    attr = make_sampling_attr(s, TargetKind::Processes);
    state.add_attr(parse_perf_attr({reinterpret_cast<const uint8_t*>(&attr), sizeof attr}), {});
  }
  // A decoded record's strings point into its bytes: the fixture keeps a copy of every record it
  // decoded, so that callers may pass temporaries.
  Record decode(const std::vector<uint8_t>& bytes) {
    const std::vector<uint8_t>& kept_bytes = kept.emplace_back(bytes);
    RawRecord raw;
    std::memcpy(&raw.type, kept_bytes.data(), 4);
    std::memcpy(&raw.misc, kept_bytes.data() + 4, 2);
    raw.bytes = kept_bytes;
    Record r;
    RecordDecoder(state).decode(raw, r);
    return r;
  }
  std::deque<std::vector<uint8_t>> kept;
  SampleIdLayout layout() const { return {attr.sample_type, attr.sample_id_all != 0}; }
  perf_event_attr attr;
  PerfSessionState state;
};

TEST(SyntheticRecords, Mmap2DecodesToTheMapsLine) {
  DecodeFixture f;
  auto e = parse_proc_maps_line(
      "7f00aa000000-7f00aa010000 r-xp 00001000 08:02 4242  /tmp/old binary (deleted)");
  ASSERT_TRUE(e);
  std::vector<uint8_t> bytes;
  append_mmap2_record(bytes, f.layout(), 77, 78, *e);
  uint16_t size;
  std::memcpy(&size, bytes.data() + 6, 2);
  EXPECT_EQ(size, bytes.size());
  EXPECT_EQ(size % 8, 0u);
  Record r = f.decode(bytes);
  auto* m = std::get_if<MmapRecord>(&r);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->is_mmap2);
  EXPECT_EQ(m->pid, 77u);
  EXPECT_EQ(m->tid, 78u);
  EXPECT_EQ(m->start, 0x7f00aa000000u);
  EXPECT_EQ(m->len, 0x10000u);
  EXPECT_EQ(m->pgoff, 0x1000u);
  EXPECT_EQ(m->maj, 8u);
  EXPECT_EQ(m->min, 2u);
  EXPECT_EQ(m->ino, 4242u);
  EXPECT_EQ(m->prot, uint32_t{PROT_READ | PROT_EXEC});
  EXPECT_EQ(m->flags, uint32_t{MAP_PRIVATE});
  EXPECT_TRUE(m->executable);
  EXPECT_EQ(m->cpumode, CpuMode::User);
  EXPECT_TRUE(m->build_id.empty());
  EXPECT_EQ(m->filename, "/tmp/old binary (deleted)");
  EXPECT_EQ(m->time, 0u);  // untimed: ordered ahead of the kernel's records

  auto data = parse_proc_maps_line("1000-2000 rw-p 00000000 00:00 0");
  bytes.clear();
  append_mmap2_record(bytes, f.layout(), 1, 1, *data);
  r = f.decode(bytes);
  EXPECT_FALSE(std::get<MmapRecord>(r).executable);
  EXPECT_EQ(std::get<MmapRecord>(r).filename, "//anon");
}

TEST(SyntheticRecords, CommDecodes) {
  DecodeFixture f;
  std::vector<uint8_t> bytes;
  append_comm_record(bytes, f.layout(), 5, 6, "worker-thread-1");
  append_comm_record(bytes, f.layout(), 5, 5, "abcdefg", true);  // 8 bytes with NUL: no padding
  uint16_t first_size;
  std::memcpy(&first_size, bytes.data() + 6, 2);
  Record a = f.decode({bytes.begin(), bytes.begin() + first_size});
  Record b = f.decode({bytes.begin() + first_size, bytes.end()});
  EXPECT_EQ(std::get<CommRecord>(a).comm, "worker-thread-1");
  EXPECT_EQ(std::get<CommRecord>(a).tid, 6u);
  EXPECT_FALSE(std::get<CommRecord>(a).exec);
  EXPECT_EQ(std::get<CommRecord>(b).comm, "abcdefg");
  EXPECT_TRUE(std::get<CommRecord>(b).exec);
}

TEST(ProcessSynthesizer, OwnProcessYieldsCommsAndExecutableMappings) {
  DecodeFixture f;
  std::vector<uint8_t> bytes;
  SynthesisCount count;
  ASSERT_TRUE(synthesize_process(::getpid(), f.layout(), bytes, &count));
  EXPECT_GE(count.threads, 1u);
  EXPECT_GE(count.mappings, 1u);
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  size_t comms = 0, mmaps = 0, exe_mmaps = 0;
  for (size_t at = 0; at < bytes.size();) {
    uint16_t size;
    std::memcpy(&size, bytes.data() + at + 6, 2);
    ASSERT_GE(size, 8u);
    Record r = f.decode({bytes.begin() + at, bytes.begin() + at + size});
    if (std::holds_alternative<CommRecord>(r)) ++comms;
    if (auto* m = std::get_if<MmapRecord>(&r)) {
      ++mmaps;
      EXPECT_TRUE(m->executable);
      EXPECT_EQ(m->pid, static_cast<uint32_t>(::getpid()));
      if (m->filename == exe) ++exe_mmaps;
    }
    at += size;
  }
  EXPECT_EQ(comms, count.threads);
  EXPECT_EQ(mmaps, count.mappings);
  EXPECT_GE(exe_mmaps, 1u);
  EXPECT_FALSE(synthesize_process(-5, f.layout(), bytes));
}

}  // namespace
}  // namespace profcollect
