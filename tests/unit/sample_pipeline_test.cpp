// SamplePipeline with its selectors, on hand-made records over a real ELF file (this test
// program): a match by name made before the recording's build-id table arrives (pipe mode) is
// provisional and is settled by it; a selected file that cannot be opened is counted as
// unreadable_binary, not as a build-id mismatch; images no process maps any more are released
// and their Dso indices reused; a long run of short-lived processes, each with an image of its
// own, leaves no process, file, image or counter behind; the excluded process (the collector's
// own, system-wide) is counted apart and profiled nowhere.
#include <gtest/gtest.h>

#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <string>

#include "collector/pipeline/mapped_image_selector.h"
#include "collector/records/record_source.h"
#include "collector/pipeline/sample_pipeline.h"
#include "mapper/target_image_selector.h"
#include "tests/unit/self_executable.h"

namespace profcollect {
namespace {

// Records of one process mapping `path`'s first executable segment at kBase.
struct Recording {
  static constexpr uint64_t kBase = 0x7f0000000000;
  std::deque<std::string> names;  // the records' file names point here
  LoadSegment exec;
  uint64_t pgoff = 0;

  explicit Recording(const ElfBinary& elf) {
    for (const LoadSegment& s : elf.load_segments()) {
      if (s.executable()) {
        exec = s;
        break;
      }
    }
    pgoff = exec.offset & ~uint64_t{0xfff};
  }
  MmapRecord mmap(uint32_t pid, const std::string& path, BuildId build_id = {}) {
    names.push_back(path);
    MmapRecord m;
    m.pid = m.tid = pid;
    m.start = kBase;
    m.len = exec.filesz + (exec.offset - pgoff);
    m.pgoff = pgoff;
    m.is_mmap2 = true;
    m.build_id = build_id;
    m.filename = names.back();
    return m;
  }
  // A sample at the segment's start + delta, and the vaddr it must resolve to.
  SampleRecord sample(uint32_t pid, uint64_t delta) const {
    SampleRecord s;
    s.pid = s.tid = pid;
    s.ip = kBase + (exec.offset - pgoff) + delta;
    s.cpumode = CpuMode::User;
    return s;
  }
  uint64_t vaddr(uint64_t delta) const { return exec.vaddr + delta; }
};

// Symbolic links to one file under a directory of their own, removed with it.
class TempFiles {
 public:
  TempFiles() : dir_(::testing::TempDir() + "/profcollect-links-" + std::to_string(getpid())) {
    std::filesystem::create_directories(dir_);
  }
  ~TempFiles() { std::filesystem::remove_all(dir_); }
  std::string symlink_to(const std::string& target, const std::string& name) const {
    const std::string link = dir_ + "/" + name;
    std::filesystem::create_symlink(target, link);
    return link;
  }

 private:
  std::string dir_;
};

BuildIdEntry entry(const std::string& path, const BuildId& id) {
  BuildIdEntry e;
  e.filename = path;
  e.build_id = id;
  return e;
}

// A build-id lookup over `table` as it stands when asked (it may grow later, as in pipe mode).
BinaryMatcher::BuildIdLookup lookup_in(const std::vector<BuildIdEntry>& table) {
  return [&table](std::string_view p) -> const BuildId* {
    for (const auto& e : table) {
      if (e.filename == p) return &e.build_id;
    }
    return nullptr;
  };
}

class SamplePipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = self_path();
    ASSERT_FALSE(path_.empty());
    target_ = LoadedImage::open_file(path_);
    if (target_->identity().build_id.empty()) GTEST_SKIP() << path_ << " has no build-id";
  }
  std::string path_;
  std::shared_ptr<LoadedImage> target_;
};

TEST_F(SamplePipelineTest, BuildIdArrivingLastRejectsAFileOfTheSameNameWithAnother) {
  std::vector<BuildIdEntry> table;  // the recording's build-id table: empty until the end
  auto lookup = lookup_in(table);
  TargetImageSelector selector(target_, false, lookup);
  SamplePipeline pipeline(selector, PipelineOptions{});
  Recording rec(*target_->elf());
  pipeline.consume(rec.mmap(10, path_));
  pipeline.add_sample(rec.sample(10, 0x10), 3);
  EXPECT_EQ(pipeline.counts().outcomes[SampleOutcome::Mapped], 3u);
  EXPECT_TRUE(pipeline.profiled_slots().empty()) << "undecided until the input is complete";

  table.push_back(entry(path_, *BuildId::from_hex("00112233445566778899aabbccddeeff00112233")));
  pipeline.settle();
  EXPECT_EQ(pipeline.counts().outcomes[SampleOutcome::Mapped], 0u);
  EXPECT_EQ(pipeline.counts().outcomes[SampleOutcome::BuildIdMismatch], 3u);
  EXPECT_TRUE(pipeline.profiled_slots().empty());
}

TEST_F(SamplePipelineTest, BuildIdArrivingLastConfirmsTheBinaryAndKeepsItsSamples) {
  std::vector<BuildIdEntry> table;
  auto lookup = lookup_in(table);
  TargetImageSelector selector(target_, false, lookup);
  SamplePipeline pipeline(selector, PipelineOptions{});
  Recording rec(*target_->elf());
  pipeline.consume(rec.mmap(10, path_));
  pipeline.add_sample(rec.sample(10, 0x10), 2);
  pipeline.add_sample(rec.sample(10, 0x20));
  table.push_back(entry(path_, target_->identity().build_id));
  pipeline.settle();
  ASSERT_EQ(pipeline.profiled_slots().size(), 1u);
  const ImageProfile& p = *pipeline.profile(pipeline.profiled_slots().front());
  EXPECT_EQ(p.samples(), 3u);
  EXPECT_EQ(p.ips().counts().at(rec.vaddr(0x10)), 2u);
  EXPECT_EQ(p.ips().counts().at(rec.vaddr(0x20)), 1u);
  EXPECT_EQ(pipeline.counts().outcomes[SampleOutcome::Mapped], 3u);
}

TEST_F(SamplePipelineTest, AMatchByBuildIdIsFinalAtOnce) {
  TargetImageSelector selector(target_, false, nullptr);
  SamplePipeline pipeline(selector, PipelineOptions{});
  Recording rec(*target_->elf());
  pipeline.consume(rec.mmap(10, "/elsewhere/renamed", target_->identity().build_id));
  pipeline.add_sample(rec.sample(10, 0x10));
  EXPECT_EQ(pipeline.profiled_slots().size(), 1u);
}

TEST_F(SamplePipelineTest, AnUnreadableSelectedFileIsNotABuildIdMismatch) {
  const std::string not_elf = ::testing::TempDir() + "/profcollect-not-elf";
  std::ofstream(not_elf) << "not an ELF file\n";
  BinarySelection all;
  all.all = true;
  MappedImageSelector selector(all);
  SamplePipeline pipeline(selector, PipelineOptions{});
  Recording rec(*target_->elf());
  const BuildId other = *BuildId::from_hex("00112233445566778899aabbccddeeff00112233");
  pipeline.consume(rec.mmap(4000001, "/nonexistent/profcollect-gone"));
  pipeline.add_sample(rec.sample(4000001, 0x10));
  pipeline.consume(rec.mmap(4000002, not_elf));
  pipeline.add_sample(rec.sample(4000002, 0x10));
  pipeline.consume(rec.mmap(4000003, path_, other));
  pipeline.add_sample(rec.sample(4000003, 0x10));
  pipeline.consume(rec.mmap(4000004, path_, target_->identity().build_id));
  pipeline.add_sample(rec.sample(4000004, 0x10));
  EXPECT_EQ(pipeline.counts().outcomes[SampleOutcome::UnreadableBinary], 2u);
  EXPECT_EQ(pipeline.counts().outcomes[SampleOutcome::BuildIdMismatch], 1u);
  EXPECT_EQ(pipeline.counts().outcomes[SampleOutcome::Mapped], 1u);
  const auto warnings = pipeline.take_warnings();  // two unreadable, one of another build-id
  EXPECT_EQ(warnings.size(), 3u);
  std::remove(not_elf.c_str());
}

TEST_F(SamplePipelineTest, TheExcludedProcessIsCountedApartAndProfiledNowhere) {
  BinarySelection all;
  all.all = true;
  MappedImageSelector selector(all);
  PipelineOptions options;
  options.excluded_pid = 20;
  SamplePipeline pipeline(selector, options);
  Recording rec(*target_->elf());
  pipeline.consume(rec.mmap(10, path_, target_->identity().build_id));
  pipeline.consume(rec.mmap(20, path_, target_->identity().build_id));
  pipeline.add_sample(rec.sample(10, 0x10), 2);
  pipeline.add_sample(rec.sample(20, 0x10), 5);
  pipeline.add_sample(rec.sample(20, 0x20));
  EXPECT_EQ(pipeline.counts().samples, 2u);
  EXPECT_EQ(pipeline.counts().excluded, 6u);
  EXPECT_EQ(pipeline.counts().outcomes.total(), 2u);
  ASSERT_EQ(pipeline.profiled_slots().size(), 1u);
  const ImageProfile& p = *pipeline.profile(pipeline.profiled_slots().front());
  EXPECT_EQ(p.samples(), 2u);
  EXPECT_EQ(p.ips().counts().count(rec.vaddr(0x20)), 0u);
}

TEST_F(SamplePipelineTest, ImagesNoProcessMapsAreReleasedAndTheirIndicesReused) {
  BinarySelection all;
  all.all = true;
  MappedImageSelector selector(all);
  SamplePipeline pipeline(selector, PipelineOptions{});
  Recording rec(*target_->elf());
  pipeline.consume(rec.mmap(4000001, path_, target_->identity().build_id));
  pipeline.add_sample(rec.sample(4000001, 0x10));
  EXPECT_TRUE(pipeline.release_unmapped().empty()) << "still mapped";
  ASSERT_EQ(pipeline.profiled_slots().size(), 1u);
  TaskRecord exit;
  exit.is_exit = true;
  exit.pid = exit.tid = 4000001;
  pipeline.consume(exit);
  const auto released = pipeline.release_unmapped();
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released.front().build_id, target_->identity().build_id);
  EXPECT_TRUE(pipeline.profiled_slots().empty());
  EXPECT_EQ(pipeline.processes().live_dso_count(), 0u);

  // Another process maps it again: a new image, a reused Dso index and slot, counts from zero.
  for (uint32_t pid = 4000002; pid < 4000010; ++pid) {
    pipeline.consume(rec.mmap(pid, path_, target_->identity().build_id));
    pipeline.add_sample(rec.sample(pid, 0x10));
    TaskRecord e;
    e.is_exit = true;
    e.pid = e.tid = pid;
    pipeline.consume(e);
    EXPECT_EQ(pipeline.release_unmapped().size(), 1u);
  }
  EXPECT_EQ(pipeline.processes().dsos().size(), 1u) << "indices are reused";
  EXPECT_EQ(pipeline.slot_count(), 1u) << "slots are reused";
}

TEST_F(SamplePipelineTest, ShortLivedProcessesWithImagesOfTheirOwnLeaveNoStateBehind) {
  // Each process maps a file of its own (its own path: another image and profile directory) and
  // exits; the pipeline is released every few processes, as a flush does, with some processes
  // still running. Whatever is kept per process, file or image must not add up over the run.
  TempFiles links;
  BinarySelection all;
  all.all = true;
  MappedImageSelector selector(all);
  SamplePipeline pipeline(selector, PipelineOptions{});
  Recording rec(*target_->elf());
  constexpr uint32_t kParent = 4100000, kProcesses = 300, kReleaseEvery = 7;
  size_t most_dsos = 0, most_slots = 0, most_processes = 0;
  for (uint32_t i = 0; i < kProcesses; ++i) {
    const uint32_t pid = kParent + 1 + i;
    const std::string link = links.symlink_to(path_, "image" + std::to_string(i));
    TaskRecord fork;
    fork.pid = fork.tid = pid;
    fork.ppid = fork.ptid = kParent;
    pipeline.consume(fork);
    CommRecord exec;
    exec.pid = exec.tid = pid;
    exec.exec = true;
    exec.comm = "worker";
    pipeline.consume(exec);
    pipeline.consume(rec.mmap(pid, link));
    pipeline.add_sample(rec.sample(pid, 0x10));
    TaskRecord thread_exit;  // a thread's exit alone ends nothing
    thread_exit.is_exit = true;
    thread_exit.pid = pid;
    thread_exit.tid = pid + 1000000;
    pipeline.consume(thread_exit);
    TaskRecord exit;
    exit.is_exit = true;
    exit.pid = exit.tid = pid;
    pipeline.consume(exit);
    if (i % kReleaseEvery == kReleaseEvery - 1) pipeline.release_unmapped();
    most_dsos = std::max(most_dsos, pipeline.processes().dsos().size());
    most_slots = std::max(most_slots, pipeline.slot_count());
    most_processes = std::max(most_processes, pipeline.processes().process_count());
  }
  pipeline.release_unmapped();
  EXPECT_EQ(pipeline.counts().outcomes[SampleOutcome::Mapped], kProcesses)
      << "every sample was profiled";
  EXPECT_EQ(pipeline.processes().process_count(), 0u);
  EXPECT_EQ(pipeline.processes().live_dso_count(), 0u);
  EXPECT_TRUE(pipeline.counts().per_dso.empty());
  EXPECT_TRUE(pipeline.profiled_slots().empty());
  // Between two releases at most kReleaseEvery files and images were met.
  EXPECT_LE(most_dsos, kReleaseEvery);
  EXPECT_LE(most_slots, kReleaseEvery);
  EXPECT_LE(most_processes, 1u);
}

}  // namespace
}  // namespace profcollect
