#include "tests/integration/bpf_counter_support.h"

#include <bpf/bpf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "collector/host/online_cpus.h"

namespace profcollect::test {

std::optional<std::string> sample_counter_unavailable() {
  if (::geteuid() != 0) return "needs root (CAP_BPF and CAP_PERFMON) to load the BPF program";
  try {
    SampleCounter probe({1024, 16}, true);
  } catch (const BpfError& e) {
    return std::string("BPF refused here: ") + e.what();
  }
  return std::nullopt;
}

ClockEvents::ClockEvents(uint64_t period_ns, pid_t pid) : period_ns_(period_ns) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = period_ns;
  attr.sample_type = PERF_SAMPLE_IP;
  attr.disabled = 1;
  for (int cpu : online_cpus()) {
    const int fd =
        static_cast<int>(::syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd < 0) {
      const int error = errno;
      for (int open : fds_) ::close(open);
      throw std::system_error(error, std::generic_category(), "perf_event_open cpu-clock");
    }
    fds_.push_back(fd);
  }
}

ClockEvents::~ClockEvents() {
  for (int fd : fds_) ::close(fd);
}

void ClockEvents::enable() {
  for (int fd : fds_) ::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

void ClockEvents::disable() {
  for (int fd : fds_) ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

uint64_t ClockEvents::periods_elapsed() const {
  uint64_t periods = 0;
  for (int fd : fds_) {
    uint64_t count = 0;
    if (::read(fd, &count, sizeof(count)) != sizeof(count))
      throw std::runtime_error("read of a perf event");
    periods += count / period_ns_;
  }
  return periods;
}

namespace {

// Fills `code` with no-ops ending in a jump back to its start.
void write_slide(unsigned char* code, size_t instructions) {
#if defined(__x86_64__)
  std::memset(code, 0x90, instructions);  // nop
  unsigned char* jump = code + instructions;
  const int32_t back = -static_cast<int32_t>(instructions + 5);
  jump[0] = 0xe9;  // jmp rel32, from the end of the 5-byte instruction
  std::memcpy(jump + 1, &back, 4);
#elif defined(__aarch64__)
  const uint32_t nop = 0xd503201f;
  for (size_t i = 0; i < instructions; ++i) std::memcpy(code + 4 * i, &nop, 4);
  const uint32_t branch =
      0x14000000 | (static_cast<uint32_t>(-static_cast<int32_t>(instructions)) & 0x3ffffff);
  std::memcpy(code + 4 * instructions, &branch, 4);
#else
#error "no no-op slide for this architecture"
#endif
}

// Jumps into the slide. clang's -fsanitize=function (part of UBSan) checks an indirect call by
// reading a type signature in the 8 bytes before the callee; the slide starts a fresh page, so
// that read would fault: the slide has no signature to check.
[[noreturn]]
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void enter_slide(void* code) {
  reinterpret_cast<void (*)()>(code)();
  __builtin_unreachable();
}

#if defined(__x86_64__)
constexpr size_t kInstructionBytes = 1, kJumpBytes = 5;
#else
constexpr size_t kInstructionBytes = 4, kJumpBytes = 4;
#endif

}  // namespace

SpinningChild::SpinningChild(size_t instructions) {
  const size_t bytes = instructions * kInstructionBytes + kJumpBytes;
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap");
  write_slide(static_cast<unsigned char*>(map), instructions);
  if (::mprotect(map, bytes, PROT_READ | PROT_EXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "mprotect");
  }
  __builtin___clear_cache(static_cast<char*>(map), static_cast<char*>(map) + bytes);
  begin_ = reinterpret_cast<uint64_t>(map);
  end_ = begin_ + bytes;
  pid_ = ::fork();
  if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid_ == 0) enter_slide(map);
  ::munmap(map, bytes);
}

SpinningChild::~SpinningChild() {
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

BpfRunStatistics::BpfRunStatistics() : fd_(bpf_enable_stats(BPF_STATS_RUN_TIME)) {
  if (fd_ < 0) throw std::system_error(-fd_, std::generic_category(), "BPF_ENABLE_STATS");
}

BpfRunStatistics::~BpfRunStatistics() { ::close(fd_); }

uint64_t total(const DrainedCounts& counts) {
  uint64_t sum = 0;
  for (const CountedIp& c : counts.ips) sum += c.count;
  return sum;
}

}  // namespace profcollect::test
