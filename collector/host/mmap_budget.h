// How much ring-buffer memory this user may lock, and the number of data pages per buffer that
// fits it. The kernel (perf_mmap in kernel/events/core.c) charges each buffer its data pages
// plus the control page: first to the user's allowance of perf_event_mlock_kb per online CPU,
// the rest to the process's RLIMIT_MEMLOCK; beyond both, mmap fails with EPERM unless the
// process has CAP_IPC_LOCK or perf_event_paranoid is -1.
#pragma once

#include "collector/host/setting_error.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "collector/host/perf_permissions.h"

namespace profcollect {

struct LockBudget {
  uint64_t mlock_kb_per_cpu = 516;  // kernel.perf_event_mlock_kb
  uint32_t online_cpus = 1;         // the kernel multiplies by all online CPUs
  uint64_t rlimit_memlock_bytes = 0;
  bool rlimit_unlimited = false;
  bool unlimited = false;  // CAP_IPC_LOCK or perf_event_paranoid -1
  uint64_t page_size = 4096;

  static LockBudget of_this_process(const PerfPermissions& permissions);

  // Pages this user may lock for ring buffers (control pages included); UINT64_MAX if unlimited.
  uint64_t lockable_pages() const;
  // "kernel.perf_event_mlock_kb 516 KiB x 2 CPUs + RLIMIT_MEMLOCK 8192 KiB = 9224 KiB".
  std::string describe() const;
};

// An -m that is not a power of two or does not fit the budget, or a budget too small for even
// one page per buffer. The message says the limit and how to raise it.
class BufferSizeError : public SettingError {
 public:
  explicit BufferSizeError(const std::string& message) : SettingError(message) {}
};

// perf record's default: 512 KiB of data per buffer (what perf_event_mlock_kb allows per CPU).
inline constexpr uint32_t kDefaultMaxMmapPages = 128;

// Data pages per buffer for `buffers` buffers (one per CPU). `requested` (-m) must be a power of
// two that fits; without it, the largest power of two up to kDefaultMaxMmapPages that fits.
uint32_t choose_mmap_pages(const LockBudget& budget, uint32_t buffers,
                           std::optional<uint64_t> requested);

// An AUX area (Arm SPE's trace) beside each buffer's data area. The kernel charges its pages to
// the same allowance as the data pages (perf_mmap, the AUX branch), and takes only a power of
// two, at least kMinAuxPages. perf's defaults for an SPE event: 256 KiB of data and 128 KiB of
// AUX per CPU for an unprivileged user, 4 MiB of AUX with an unlimited budget.
inline constexpr uint32_t kMinAuxPages = 2;
inline constexpr uint64_t kDefaultAuxBytes = 128 * 1024;
inline constexpr uint64_t kUnlimitedAuxBytes = 4 * 1024 * 1024;
inline constexpr uint64_t kDefaultDataBytesBesideAux = 256 * 1024;

struct AuxBufferPages {
  uint32_t data_pages = 0;
  uint32_t aux_pages = 0;
};

// Data and AUX pages per buffer for `buffers` buffers. `requested` (-m, data pages) is checked as
// choose_mmap_pages() does; without it the data area is perf's default, halved while that leaves
// no room for kMinAuxPages. The AUX area is then the largest power of two up to perf's default
// that fits what is left. Throws BufferSizeError when not even kMinAuxPages fit.
AuxBufferPages choose_aux_buffer_pages(const LockBudget& budget, uint32_t buffers,
                                       std::optional<uint64_t> requested);

// The message for an mmap refused with EPERM although the budget said it fits (another
// process of this user holds part of the allowance).
std::string buffer_refused_message(const LockBudget& budget, uint32_t buffers, uint32_t pages);

}  // namespace profcollect
