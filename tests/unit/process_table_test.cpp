// ProcessTable: mappings in, lookups out, for the record sequences the kernel produces.
#include "mapper/process_table.h"

#include <gtest/gtest.h>

#include "tests/support/mmap_records.h"

namespace profcollect {
namespace {

std::string file_at(const ProcessTable& t, uint32_t pid, uint64_t addr) {
  const Mapping* m = t.find(pid, addr, CpuMode::User);
  return m ? t.dso(m->dso).path : "";
}

TEST(ProcessTable, LookupFindsTheMappingHoldingTheAddress) {
  ProcessTable t;
  t.on_mmap(user_mmap(10, 0x1000, 0x1000, 0, "/bin/a"));
  t.on_mmap(user_mmap(10, 0x3000, 0x2000, 0x1000, "/lib/b.so"));
  EXPECT_EQ(file_at(t, 10, 0x1000), "/bin/a");
  EXPECT_EQ(file_at(t, 10, 0x1fff), "/bin/a");
  EXPECT_EQ(file_at(t, 10, 0x2000), "");
  EXPECT_EQ(file_at(t, 10, 0x4fff), "/lib/b.so");
  EXPECT_EQ(file_at(t, 10, 0x5000), "");
  EXPECT_EQ(file_at(t, 11, 0x1000), "") << "another process has no mappings";
}

// Table-driven: a new mapping over existing ones trims or splits them, keeping file offsets.
struct OverlapCase {
  const char* name;
  uint64_t new_start, new_len;
  // (address, expected file, expected pgoff of the mapping found there)
  std::vector<std::tuple<uint64_t, std::string, uint64_t>> expect;
};

class ProcessTableOverlap : public ::testing::TestWithParam<OverlapCase> {};

TEST_P(ProcessTableOverlap, NewMappingReplacesWhatItCovers) {
  const auto& c = GetParam();
  ProcessTable t;
  t.on_mmap(user_mmap(1, 0x10000, 0x4000, 0x100000, "/old"));
  t.on_mmap(user_mmap(1, c.new_start, c.new_len, 0, "/new"));
  for (const auto& [addr, file, pgoff] : c.expect) {
    const Mapping* m = t.find(1, addr, CpuMode::User);
    if (file.empty()) {
      EXPECT_EQ(m, nullptr) << c.name << " at " << std::hex << addr;
      continue;
    }
    ASSERT_NE(m, nullptr) << c.name << " at " << std::hex << addr;
    EXPECT_EQ(t.dso(m->dso).path, file) << c.name << " at " << std::hex << addr;
    EXPECT_EQ(m->pgoff, pgoff) << c.name << " at " << std::hex << addr;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProcessTableOverlap,
    ::testing::Values(
        OverlapCase{"middle",
                    0x11000,
                    0x1000,
                    {{0x10000, "/old", 0x100000},
                     {0x11000, "/new", 0},
                     {0x12000, "/old", 0x102000},
                     {0x13fff, "/old", 0x102000}}},
        OverlapCase{"head",
                    0xf000,
                    0x2000,
                    {{0xf000, "/new", 0}, {0x10fff, "/new", 0}, {0x11000, "/old", 0x101000}}},
        OverlapCase{"tail",
                    0x13000,
                    0x2000,
                    {{0x12fff, "/old", 0x100000}, {0x13000, "/new", 0}, {0x14fff, "/new", 0}}},
        OverlapCase{"whole", 0x10000, 0x4000, {{0x10000, "/new", 0}, {0x13fff, "/new", 0}}},
        OverlapCase{
            "beyond", 0x20000, 0x1000, {{0x10000, "/old", 0x100000}, {0x20000, "/new", 0}}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ProcessTable, ForkCopiesTheParentsMappingsAndLaterChangesStayApart) {
  ProcessTable t;
  t.on_mmap(user_mmap(100, 0x1000, 0x1000, 0, "/bin/parent"));
  TaskRecord fork;
  fork.pid = fork.tid = 200;
  fork.ppid = fork.ptid = 100;
  t.on_task(fork);
  EXPECT_EQ(file_at(t, 200, 0x1000), "/bin/parent");
  t.on_mmap(user_mmap(200, 0x1000, 0x1000, 0, "/bin/child"));
  EXPECT_EQ(file_at(t, 200, 0x1000), "/bin/child");
  EXPECT_EQ(file_at(t, 100, 0x1000), "/bin/parent") << "the child's mmap must not reach the parent";
}

TEST(ProcessTable, NewThreadSharesItsProcess) {
  ProcessTable t;
  t.on_mmap(user_mmap(100, 0x1000, 0x1000, 0, "/bin/a"));
  TaskRecord thread;
  thread.pid = thread.ppid = 100;
  thread.tid = 101;
  thread.ptid = 100;
  t.on_task(thread);
  t.on_mmap(user_mmap(100, 0x5000, 0x1000, 0, "/lib/late.so"));
  EXPECT_EQ(file_at(t, 100, 0x5000), "/lib/late.so");
}

TEST(ProcessTable, ExecClearsTheAddressSpace) {
  ProcessTable t;
  t.on_mmap(user_mmap(100, 0x1000, 0x1000, 0, "/bin/sh"));
  CommRecord comm;
  comm.pid = comm.tid = 100;
  comm.exec = true;
  comm.comm = "hot";
  t.on_comm(comm);
  EXPECT_EQ(file_at(t, 100, 0x1000), "");
  t.on_mmap(user_mmap(100, 0x1000, 0x1000, 0, "/bin/hot"));
  EXPECT_EQ(file_at(t, 100, 0x1000), "/bin/hot");
}

TEST(ProcessTable, CommWithoutExecKeepsMappings) {
  ProcessTable t;
  t.on_mmap(user_mmap(100, 0x1000, 0x1000, 0, "/bin/a"));
  CommRecord comm;
  comm.pid = comm.tid = 100;
  comm.comm = "renamed";
  t.on_comm(comm);
  EXPECT_EQ(file_at(t, 100, 0x1000), "/bin/a");
}

TEST(ProcessTable, ExitOfTheProcessEndsItButAThreadExitDoesNot) {
  ProcessTable t;
  t.on_mmap(user_mmap(100, 0x1000, 0x1000, 0, "/bin/a"));
  TaskRecord exit_thread;
  exit_thread.is_exit = true;
  exit_thread.pid = exit_thread.ppid = 100;
  exit_thread.tid = 101;
  t.on_task(exit_thread);
  EXPECT_EQ(file_at(t, 100, 0x1000), "/bin/a");
  TaskRecord exit_process = exit_thread;
  exit_process.tid = 100;
  t.on_task(exit_process);
  EXPECT_EQ(file_at(t, 100, 0x1000), "");
}

TEST(ProcessTable, KernelSamplesUseTheKernelMappings) {
  ProcessTable t;
  t.on_mmap(user_mmap(ProcessTable::kKernelPid, 0xffffffff81000000, 0x1000000, 0xffffffff81000000,
                      "[kernel.kallsyms]_text"));
  const Mapping* m = t.find(100, 0xffffffff81001234, CpuMode::Kernel);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(t.dso(m->dso).kernel);
  EXPECT_EQ(t.find(100, 0xffffffff81001234, CpuMode::User), nullptr);
}

TEST(ProcessTable, SameFileIsOneDsoAndARebuiltFileIsAnother) {
  ProcessTable t;
  MmapRecord a = user_mmap(1, 0x1000, 0x1000, 0, "/bin/a");
  a.ino = 5;
  MmapRecord b = user_mmap(2, 0x1000, 0x1000, 0, "/bin/a");
  b.ino = 5;
  MmapRecord c = user_mmap(3, 0x1000, 0x1000, 0, "/bin/a");
  c.ino = 6;
  t.on_mmap(a);
  t.on_mmap(b);
  t.on_mmap(c);
  EXPECT_EQ(t.find(1, 0x1000, CpuMode::User)->dso, t.find(2, 0x1000, CpuMode::User)->dso);
  EXPECT_NE(t.find(1, 0x1000, CpuMode::User)->dso, t.find(3, 0x1000, CpuMode::User)->dso);
}

}  // namespace
}  // namespace profcollect
