// PerfScriptReader: `perf script -F ip,brstack --show-mmap-events` lines (formats.md section 6)
// into records.
#include "collector/input/perf_script_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

namespace profcollect {
namespace {

class PerfScriptReaderTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  std::unique_ptr<PerfScriptReader> open_text(const std::string& text) {
    path_ = std::filesystem::temp_directory_path() /
            ("perf_script_reader_test." + std::to_string(getpid()));
    std::ofstream(path_) << text;
    return PerfScriptReader::open(path_.string());
  }
  std::filesystem::path path_;
};

TEST_F(PerfScriptReaderTest, MmapLinesAndSamplesWithBranchStacks) {
  auto reader = open_text(
      "PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x1209988) @ 0xffffffff81000000]: x "
      "[kernel.kallsyms]_text\n"
      "PERF_RECORD_MMAP2 1234/1235: [0x555555555000(0x1000) @ 0x1000 fe:01 4242 7]: r-xp "
      "/path/bin\n"
      "           555555555204 0x555555555212/0x5555555551f0/P/-/-/0  "
      "0x555555555100/0x555555555200/M/X/A/17/COND/\n"
      "   ffffffff81001234\n");
  Record record;
  ASSERT_TRUE(reader->next(record));
  const auto& kernel = std::get<MmapRecord>(record);
  EXPECT_EQ(kernel.pid, kNoPid);
  EXPECT_EQ(kernel.cpumode, CpuMode::Kernel);
  EXPECT_EQ(kernel.start, 0xffffffff81000000u);
  EXPECT_EQ(kernel.filename, "[kernel.kallsyms]_text");
  EXPECT_TRUE(kernel.executable);

  ASSERT_TRUE(reader->next(record));
  const auto& mmap = std::get<MmapRecord>(record);
  EXPECT_TRUE(mmap.is_mmap2);
  EXPECT_EQ(mmap.pid, 1234u);
  EXPECT_EQ(mmap.tid, 1235u);
  EXPECT_EQ(mmap.start, 0x555555555000u);
  EXPECT_EQ(mmap.len, 0x1000u);
  EXPECT_EQ(mmap.pgoff, 0x1000u);
  EXPECT_EQ(mmap.maj, 0xfeu);
  EXPECT_EQ(mmap.min, 1u);
  EXPECT_EQ(mmap.ino, 4242u);
  EXPECT_TRUE(mmap.executable);
  EXPECT_EQ(mmap.cpumode, CpuMode::User);
  EXPECT_EQ(mmap.filename, "/path/bin");

  ASSERT_TRUE(reader->next(record));
  const auto& sample = std::get<SampleRecord>(record);
  EXPECT_EQ(sample.pid, 1234u) << "a sample belongs to the process of the latest user MMAP";
  EXPECT_EQ(sample.ip, 0x555555555204u);
  EXPECT_EQ(sample.cpumode, CpuMode::User);
  ASSERT_TRUE(sample.has_branch_stack);
  ASSERT_EQ(sample.branches.size(), 2u);
  EXPECT_EQ(sample.branches[0].from, 0x555555555212u);
  EXPECT_EQ(sample.branches[0].to, 0x5555555551f0u);
  EXPECT_TRUE(sample.branches[0].predicted());
  EXPECT_FALSE(sample.branches[0].mispredicted());
  EXPECT_TRUE(sample.branches[1].mispredicted());
  EXPECT_TRUE(sample.branches[1].in_tx());
  EXPECT_TRUE(sample.branches[1].abort());
  EXPECT_EQ(sample.branches[1].cycles(), 17);

  ASSERT_TRUE(reader->next(record));
  const auto& kernel_sample = std::get<SampleRecord>(record);
  EXPECT_EQ(kernel_sample.cpumode, CpuMode::Kernel);
  EXPECT_FALSE(kernel_sample.has_branch_stack);
  EXPECT_FALSE(reader->next(record));
  EXPECT_EQ(reader->stats().samples, 2u);
  EXPECT_EQ(reader->stats().mmaps, 2u);
  EXPECT_NE(reader->session().attrs.at(0).sample_type & (1u << 11), 0u);
}

TEST_F(PerfScriptReaderTest, BuildIdMmapPidColumnEventNameAndJunk) {
  auto reader = open_text(
      "PERF_RECORD_MMAP2 7/7: [0x400000(0x2000) @ 0 <0123456789abcdef0123456789abcdef01234567>]: "
      "r-xp /bin/x\n"
      "some text perf printed\n"
      "  99/100 cycles:u:  401000 0x401010/0x401000/P/-/-/0\n"
      "  401004 notabranch\n");
  Record record;
  ASSERT_TRUE(reader->next(record));
  const auto& mmap = std::get<MmapRecord>(record);
  EXPECT_EQ(mmap.build_id.to_hex(), "0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(mmap.pgoff, 0u);
  ASSERT_TRUE(reader->next(record));
  const auto& sample = std::get<SampleRecord>(record);
  EXPECT_EQ(sample.pid, 99u);
  EXPECT_EQ(sample.tid, 100u);
  EXPECT_EQ(sample.ip, 0x401000u);
  EXPECT_EQ(sample.branches.size(), 1u);
  ASSERT_TRUE(reader->next(record));
  EXPECT_EQ(std::get<SampleRecord>(record).branches.size(), 0u);
  EXPECT_EQ(reader->stats().bad_branch_entries, 1u);
  EXPECT_FALSE(reader->next(record));
  EXPECT_EQ(reader->stats().skipped_lines, 1u);
}

TEST_F(PerfScriptReaderTest, EventNamesGiveOneAttrEachAndBranchTypesAndSpecsAreKept) {
  auto reader = open_text(
      "  99/99 cycles:u:  401000 0x401010/0x401000/M/-/-/7/COND/SPEC_WRONG_PATH\n"
      "  99/99 instructions:u:  401004\n"
      "  99/99 cycles:u:  401008 0x401020/0x401030/P/X/A/2/IND_CALL/NON_SPEC_CORRECT_PATH "
      "0x1/0x2/-/-/-/0/RET\n");
  Record record;
  ASSERT_TRUE(reader->next(record));
  const auto& first = std::get<SampleRecord>(record);
  EXPECT_EQ(first.attr_index, 0u);
  ASSERT_EQ(first.branches.size(), 1u);
  EXPECT_TRUE(first.branches[0].mispredicted());
  EXPECT_EQ(first.branches[0].cycles(), 7u);
  EXPECT_EQ(first.branches[0].type(), 1u);  // PERF_BR_COND
  EXPECT_EQ(first.branches[0].spec(), 1u);  // PERF_BR_SPEC_WRONG_PATH
  ASSERT_TRUE(reader->next(record));
  EXPECT_EQ(std::get<SampleRecord>(record).attr_index, 1u);
  ASSERT_TRUE(reader->next(record));
  const auto& third = std::get<SampleRecord>(record);
  EXPECT_EQ(third.attr_index, 0u);
  ASSERT_EQ(third.branches.size(), 2u);
  EXPECT_TRUE(third.branches[0].predicted());
  EXPECT_TRUE(third.branches[0].in_tx());
  EXPECT_TRUE(third.branches[0].abort());
  EXPECT_EQ(third.branches[0].type(), 5u);  // PERF_BR_IND_CALL
  EXPECT_EQ(third.branches[0].spec(), 2u);  // PERF_BR_NON_SPEC_CORRECT_PATH
  EXPECT_EQ(third.branches[1].type(), 6u);  // PERF_BR_RET
  EXPECT_EQ(third.branches[1].spec(), 0u);
  EXPECT_FALSE(reader->next(record));
  ASSERT_EQ(reader->session().attrs.size(), 2u);
  EXPECT_EQ(reader->session().attrs[0].name, "cycles:u");
  EXPECT_EQ(reader->session().attrs[1].name, "instructions:u");
}

TEST_F(PerfScriptReaderTest, WithoutEventNamesTheOneAttrIsNamedPerfScript) {
  auto reader = open_text("  401000\n");
  Record record;
  ASSERT_TRUE(reader->next(record));
  ASSERT_EQ(reader->session().attrs.size(), 1u);
  EXPECT_EQ(reader->session().attrs[0].name, "perf-script");
}

TEST_F(PerfScriptReaderTest, MissingFileIsAnOpenError) {
  EXPECT_THROW(PerfScriptReader::open("/nonexistent/perf.script"), OpenError);
}

}  // namespace
}  // namespace profcollect
