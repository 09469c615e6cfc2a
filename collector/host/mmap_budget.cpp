#include "collector/host/mmap_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdlib>

#include "collector/host/online_cpus.h"
#include "collector/host/proc_files.h"

namespace profcollect {

namespace {

constexpr uint64_t kUnlimited = UINT64_MAX;

std::string kib(uint64_t bytes) { return std::to_string(bytes / 1024) + " KiB"; }

// Pages `buffers` buffers of `data_pages` cost, control pages included.
uint64_t cost(uint32_t buffers, uint64_t data_pages) { return buffers * (data_pages + 1); }

// The largest power of two whose buffers fit `limit` pages, capped at `cap`; 0 if none.
uint64_t largest_fitting(uint64_t limit, uint32_t buffers, uint64_t cap) {
  uint64_t best = 0;
  for (uint64_t p = 1; p <= cap; p <<= 1)
    if (cost(buffers, p) <= limit) best = p;
  return best;
}

std::string how_to_raise() {
  return "raise the limit with `sudo sysctl -w kernel.perf_event_mlock_kb=KIB` (per CPU) or "
         "`ulimit -l KIB` (RLIMIT_MEMLOCK), or grant CAP_IPC_LOCK "
         "(`setcap cap_ipc_lock+ep $(command -v profcollect)`)";
}

}  // namespace

LockBudget LockBudget::of_this_process(const PerfPermissions& permissions) {
  LockBudget b;
  std::string line;
  if (read_first_line("/proc/sys/kernel/perf_event_mlock_kb", line) && !line.empty())
    b.mlock_kb_per_cpu = std::strtoull(line.c_str(), nullptr, 10);
  b.online_cpus = static_cast<uint32_t>(profcollect::online_cpus().size());
  rlimit rl{};
  if (::getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
    b.rlimit_unlimited = rl.rlim_cur == RLIM_INFINITY;
    b.rlimit_memlock_bytes = b.rlimit_unlimited ? 0 : rl.rlim_cur;
  }
  b.unlimited = permissions.may_lock_unlimited();
  b.page_size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return b;
}

uint64_t LockBudget::lockable_pages() const {
  if (unlimited || rlimit_unlimited) return kUnlimited;
  const uint64_t per_cpu = mlock_kb_per_cpu * 1024 / page_size;
  return per_cpu * online_cpus + rlimit_memlock_bytes / page_size;
}

std::string LockBudget::describe() const {
  if (unlimited) return "no limit (CAP_IPC_LOCK or kernel.perf_event_paranoid -1)";
  std::string text = "kernel.perf_event_mlock_kb " + std::to_string(mlock_kb_per_cpu) + " KiB x " +
                     std::to_string(online_cpus) + " CPUs + RLIMIT_MEMLOCK ";
  if (rlimit_unlimited) return text + "unlimited";
  return text + kib(rlimit_memlock_bytes) + " = " + kib(lockable_pages() * page_size);
}

uint32_t choose_mmap_pages(const LockBudget& budget, uint32_t buffers,
                           std::optional<uint64_t> requested) {
  if (buffers == 0) buffers = 1;
  const uint64_t limit = budget.lockable_pages();
  if (requested) {
    const uint64_t pages = *requested;
    if (pages == 0 || !std::has_single_bit(pages) || pages > (1u << 30))
      throw BufferSizeError("{mmap_pages} " + std::to_string(pages) +
                            ": the ring-buffer size in pages must be a power of two "
                            "(1, 2, 4, ...)");
    if (limit != kUnlimited && cost(buffers, pages) > limit) {
      std::string msg =
          "{mmap_pages} " + std::to_string(pages) + ": " + std::to_string(buffers) +
          " ring buffers (one per CPU) of " + std::to_string(pages) +
          " data pages + 1 control page need " + kib(cost(buffers, pages) * budget.page_size) +
          " of locked memory, but this user may lock only " + budget.describe() + "; ";
      if (uint64_t fits = largest_fitting(limit, buffers, pages); fits != 0)
        msg += "use {mmap_pages} " + std::to_string(fits) + " or less, or ";
      throw BufferSizeError(msg + how_to_raise());
    }
    return static_cast<uint32_t>(pages);
  }
  const uint64_t pages = largest_fitting(limit, buffers, kDefaultMaxMmapPages);
  if (pages == 0)
    throw BufferSizeError("even one page per ring buffer (" + std::to_string(buffers) +
                          " buffers, one per CPU) exceeds what this user may lock (" +
                          budget.describe() + "); " + how_to_raise());
  return static_cast<uint32_t>(pages);
}

AuxBufferPages choose_aux_buffer_pages(const LockBudget& budget, uint32_t buffers,
                                       std::optional<uint64_t> requested) {
  if (buffers == 0) buffers = 1;
  const uint64_t limit = budget.lockable_pages();
  const uint64_t page = budget.page_size ? budget.page_size : 4096;
  const uint64_t aux_cap = std::max<uint64_t>(
      kMinAuxPages, (limit == kUnlimited ? kUnlimitedAuxBytes : kDefaultAuxBytes) / page);
  uint64_t data = requested
                      ? choose_mmap_pages(budget, buffers, requested)
                      : std::max<uint64_t>(1, std::bit_floor(kDefaultDataBytesBesideAux / page));
  auto aux_fitting = [&](uint64_t data_pages) -> uint64_t {
    if (limit == kUnlimited) return std::bit_floor(aux_cap);
    const uint64_t used = cost(buffers, data_pages);
    if (used >= limit) return 0;
    const uint64_t per_buffer = (limit - used) / buffers;
    const uint64_t fits = std::bit_floor(std::min(per_buffer, aux_cap));
    return fits >= kMinAuxPages ? fits : 0;
  };
  uint64_t aux = aux_fitting(data);
  while (aux == 0 && !requested && data > 1) aux = aux_fitting(data >>= 1);
  if (aux == 0)
    throw BufferSizeError(
        std::to_string(buffers) + " ring buffers (one per CPU) of " + std::to_string(data) +
        " data pages + 1 control page and an AUX area of " + std::to_string(kMinAuxPages) +
        " pages (the least the kernel takes) need " +
        kib(buffers * (data + 1 + kMinAuxPages) * page) +
        " of locked memory, but this user may lock only " + budget.describe() + "; " +
        (requested ? "use a smaller {mmap_pages}, or " : "") + how_to_raise());
  return AuxBufferPages{static_cast<uint32_t>(data), static_cast<uint32_t>(aux)};
}

std::string buffer_refused_message(const LockBudget& budget, uint32_t buffers, uint32_t pages) {
  return "the kernel refused to map " + std::to_string(buffers) + " ring buffers of " +
         std::to_string(pages) + " data pages (" + kib(cost(buffers, pages) * budget.page_size) +
         " locked) with EPERM: this user may lock " + budget.describe() +
         ", and other perf sessions of the same user count against the "
         "perf_event_mlock_kb part; use a smaller {mmap_pages}, or " +
         how_to_raise();
}

}  // namespace profcollect
