// Ring-buffer sizing against the kernel's locked-memory accounting (perf_mmap: data pages plus
// the control page per buffer, perf_event_mlock_kb per online CPU, then RLIMIT_MEMLOCK).
#include "collector/host/mmap_budget.h"
#include "collector/cli/cli_spelling.h"

#include <gtest/gtest.h>

#include "collector/host/online_cpus.h"

namespace profcollect {
namespace {

// The kernel's defaults on a 2-CPU machine: 516 KiB per CPU, 8 MiB RLIMIT_MEMLOCK, 4 KiB pages.
LockBudget two_cpus(uint64_t rlimit_kib = 8192) {
  LockBudget b;
  b.mlock_kb_per_cpu = 516;
  b.online_cpus = 2;
  b.rlimit_memlock_bytes = rlimit_kib * 1024;
  b.page_size = 4096;
  return b;
}

TEST(MmapBudget, LockablePagesFollowTheKernelsFormula) {
  // 516 KiB = 129 pages per CPU, x2, + 8 MiB / 4 KiB = 2048.
  EXPECT_EQ(two_cpus().lockable_pages(), 129u * 2 + 2048);
  EXPECT_EQ(two_cpus(0).lockable_pages(), 258u);
  LockBudget unlimited = two_cpus();
  unlimited.unlimited = true;
  EXPECT_EQ(unlimited.lockable_pages(), UINT64_MAX);
  LockBudget inf = two_cpus();
  inf.rlimit_unlimited = true;
  EXPECT_EQ(inf.lockable_pages(), UINT64_MAX);
}

TEST(MmapBudget, DefaultIsPerfsSizeWhenItFits) {
  EXPECT_EQ(choose_mmap_pages(two_cpus(), 2, std::nullopt), 128u);
  // Without RLIMIT_MEMLOCK, 2 x (128 + 1) = 258 pages is exactly the per-CPU allowance.
  EXPECT_EQ(choose_mmap_pages(two_cpus(0), 2, std::nullopt), 128u);
}

TEST(MmapBudget, DefaultShrinksToFitManyBuffers) {
  LockBudget b = two_cpus(0);
  b.mlock_kb_per_cpu = 64;  // 16 pages per CPU: 32 pages for 2 buffers
  // 2 x (8 + 1) = 18 fits, 2 x (16 + 1) = 34 does not.
  EXPECT_EQ(choose_mmap_pages(b, 2, std::nullopt), 8u);
  b.mlock_kb_per_cpu = 4;  // 1 page per CPU: not even 1 data page + the control page each
  EXPECT_THROW(choose_mmap_pages(b, 2, std::nullopt), BufferSizeError);
}

TEST(MmapBudget, RequestedSizeMustBeAPowerOfTwo) {
  for (uint64_t bad : {0ull, 3ull, 6ull, 100ull}) {
    try {
      choose_mmap_pages(two_cpus(), 2, bad);
      ADD_FAILURE() << "-m " << bad << " accepted";
    } catch (const BufferSizeError& e) {
      EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos);
    }
  }
  EXPECT_EQ(choose_mmap_pages(two_cpus(), 2, 1), 1u);
  EXPECT_EQ(choose_mmap_pages(two_cpus(), 2, 1024), 1024u);  // 2 x 1025 <= 2306
}

TEST(MmapBudget, RequestBeyondTheLimitSaysTheLimitAndHowToRaiseIt) {
  try {
    choose_mmap_pages(two_cpus(), 2, 2048);  // 2 x 2049 = 4098 pages > 2306
    FAIL() << "-m 2048 accepted";
  } catch (const BufferSizeError& e) {
    const std::string m = e.spelled(cli_flag_of);
    EXPECT_NE(std::string(e.what()).find("buffer pages 2048"), std::string::npos)
        << "settings, not flags: " << e.what();
    EXPECT_NE(m.find("-m 2048"), std::string::npos) << m;
    EXPECT_NE(m.find("16392 KiB"), std::string::npos) << m;   // 4098 pages
    EXPECT_NE(m.find("= 9224 KiB"), std::string::npos) << m;  // 2306 pages
    EXPECT_NE(m.find("kernel.perf_event_mlock_kb 516 KiB x 2 CPUs"), std::string::npos) << m;
    EXPECT_NE(m.find("RLIMIT_MEMLOCK 8192 KiB"), std::string::npos) << m;
    EXPECT_NE(m.find("use -m 1024 or less"), std::string::npos) << m;
    EXPECT_NE(m.find("sysctl -w kernel.perf_event_mlock_kb"), std::string::npos) << m;
    EXPECT_NE(m.find("ulimit -l"), std::string::npos) << m;
    EXPECT_NE(m.find("CAP_IPC_LOCK"), std::string::npos) << m;
  }
  LockBudget root = two_cpus();
  root.unlimited = true;
  EXPECT_EQ(choose_mmap_pages(root, 2, 1u << 20), 1u << 20);
}

TEST(MmapBudget, ThisProcessBudgetIsConsistent) {
  const PerfPermissions p = PerfPermissions::of_this_process();
  const LockBudget b = LockBudget::of_this_process(p);
  EXPECT_EQ(b.online_cpus, online_cpus().size());
  EXPECT_EQ(b.unlimited, p.may_lock_unlimited());
  EXPECT_GT(b.page_size, 0u);
  EXPECT_GE(choose_mmap_pages(b, b.online_cpus, std::nullopt), 1u);
}

TEST(OnlineCpus, ParsesKernelCpuLists) {
  EXPECT_EQ(parse_cpu_list("0"), std::vector<int>{0});
  EXPECT_EQ(parse_cpu_list("0-3\n"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_cpu_list("0,2-3,7"), (std::vector<int>{0, 2, 3, 7}));
  for (const char* bad : {"", "a", "3-1", "1,", "-1", "1--2"})
    EXPECT_THROW(parse_cpu_list(bad), std::invalid_argument) << bad;
  EXPECT_FALSE(online_cpus().empty());
}

// An SPE buffer: the data pages, the control page and the AUX pages, all charged by the kernel.
TEST(MmapBudget, AuxAreaBesideTheDataAreaFitsTheSameBudget) {
  // 258 pages for 2 buffers: perf's SPE defaults, 64 data pages (256 KiB) and 32 AUX pages
  // (128 KiB) each: 2 x (64 + 1 + 32) = 194.
  AuxBufferPages p = choose_aux_buffer_pages(two_cpus(0), 2, std::nullopt);
  EXPECT_EQ(p.data_pages, 64u);
  EXPECT_EQ(p.aux_pages, 32u);
  // 32 pages for 2 buffers: the data area halves until an AUX area fits, 2 x (8 + 1 + 4) = 26.
  LockBudget tight = two_cpus(0);
  tight.mlock_kb_per_cpu = 64;
  p = choose_aux_buffer_pages(tight, 2, std::nullopt);
  EXPECT_EQ(p.data_pages, 8u);
  EXPECT_EQ(p.aux_pages, 4u);
  EXPECT_LE(2 * (p.data_pages + 1 + p.aux_pages), tight.lockable_pages());
  // 4 pages for 2 buffers: a data page and the control page each, no room for 2 AUX pages.
  tight.mlock_kb_per_cpu = 8;
  EXPECT_THROW(choose_aux_buffer_pages(tight, 2, std::nullopt), BufferSizeError);
  // A requested data size is kept: when it leaves no room, the message says to lower it.
  try {
    choose_aux_buffer_pages(two_cpus(0), 2, 128);
    ADD_FAILURE() << "128 data pages and an AUX area in 258 pages";
  } catch (const BufferSizeError& e) {
    EXPECT_NE(std::string(e.what()).find("AUX area"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("use a smaller"), std::string::npos) << e.what();
  }
  // Unlimited (CAP_IPC_LOCK): perf's 4 MiB of AUX.
  LockBudget unlimited = two_cpus();
  unlimited.unlimited = true;
  EXPECT_EQ(choose_aux_buffer_pages(unlimited, 2, std::nullopt).aux_pages, 1024u);
}

}  // namespace
}  // namespace profcollect
