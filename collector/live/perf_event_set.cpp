#include "collector/live/perf_event_set.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "collector/host/errno_name.h"
#include "collector/host/mmap_budget.h"
#include "collector/host/online_cpus.h"
#include "collector/host/proc_tasks.h"

namespace profcollect {

namespace {

using Kind = PerfEventError::Kind;

long perf_event_open(perf_event_attr& attr, pid_t pid, int cpu) {
  return ::syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

// Raises the soft fd limit to the hard one; false if it already was.
bool raise_fd_limit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max) return false;
  rl.rlim_cur = rl.rlim_max;
  return ::setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

std::vector<pid_t> unique_pids(std::vector<pid_t> pids) {
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

}  // namespace

PerfEventSet::EventList::~EventList() {
  for (const Event& e : *this) ::close(e.fd);
}

PerfEventSet::PerfEventSet(std::vector<EventSetMember> members, const CollectionTarget& target,
                           const EventSetOptions& options, const PerfPermissions& permissions)
    : members_(std::move(members)),
      opened_(members_.size(), 0),
      target_(target),
      permissions_(permissions),
      mmap_pages_(options.mmap_pages),
      aux_pages_(options.aux_pages),
      cpus_(options.cpus.empty() ? online_cpus() : options.cpus),
      ids_(members_.size()) {
  if (members_.empty()) throw PerfEventError(Kind::Other, 0, "no event to open");
  buffers_.resize(cpus_.size());
  closed_.resize(cpus_.size(), false);
  switch (target_.kind) {
    case TargetKind::SystemWide:
      open_thread(-1, -1);
      break;
    case TargetKind::Command:
      if (target_.pids.size() != 1)
        throw PerfEventError(Kind::Other, 0, "command mode needs exactly one child pid");
      // The child is one thread until its exec; open_one() reports ESRCH as "no process".
      open_thread(target_.pids[0], target_.pids[0]);
      break;
    case TargetKind::Processes:
      if (target_.pids.empty()) throw PerfEventError(Kind::Other, 0, "no process to sample");
      for (pid_t pid : unique_pids(target_.pids)) {
        size_t opened = 0;
        for (pid_t tid : list_threads(pid))
          if (open_thread(pid, tid)) ++opened;
        if (opened == 0)
          throw PerfEventError(Kind::NoProcess, ESRCH, "no process " + std::to_string(pid));
      }
      break;
  }
}

PerfEventSet::PerfEventSet(const perf_event_attr& attr, const CollectionTarget& target,
                           const EventSetOptions& options, const PerfPermissions& permissions)
    : PerfEventSet(std::vector<EventSetMember>{{attr, options.event_name, EventOutput::RingBuffer}},
                   target, options, permissions) {}

PerfEventSet::~PerfEventSet() = default;

bool PerfEventSet::open_thread(pid_t pid, pid_t tid) {
  for (size_t i = 0; i < cpus_.size(); ++i)
    for (size_t m = 0; m < members_.size(); ++m)
      if (open_one(pid, tid, i, m) < 0) return false;  // the thread has ended
  ++thread_count_;
  return true;
}

int PerfEventSet::open_one(pid_t pid, pid_t tid, size_t cpu_index, size_t member) {
  const int cpu = cpus_[cpu_index];
  perf_event_attr& attr = members_[member].attr;
  for (;;) {
    const long fd = perf_event_open(attr, tid, cpu);
    if (fd >= 0) {
      events_.push_back(Event{static_cast<int>(fd), static_cast<int>(cpu_index), tid, member});
      ++opened_[member];
      attach(static_cast<int>(fd), cpu_index, pid, member);
      return static_cast<int>(fd);
    }
    const int err = errno;
    if (err == EINVAL && attr.build_id && opened_[member] == 0) {
      // Linux before 5.12 has no build-id in MMAP2; the bit is reserved there.
      attr.build_id = 0;
      notes_.push_back(
          "the kernel does not put build-ids in MMAP2 records (Linux 5.12+); "
          "they are read from the mapped files instead");
      continue;
    }
    if ((err == EMFILE || err == ENFILE) && !raised_fd_limit_) {
      raised_fd_limit_ = true;
      if (raise_fd_limit()) continue;
    }
    if (err == ESRCH && target_.kind == TargetKind::Processes) return -1;
    OpenFailure f;
    f.error_number = err;
    f.target = target_.kind;
    f.pid = pid;
    f.tid = tid;
    f.cpu = cpu;
    f.include_kernel = !attr.exclude_kernel;
    f.event_name = members_[member].name;
    if (pid > 0) {
      if (auto owner = process_owner(pid); owner && *owner != permissions_.uid) {
        f.other_user = true;
        f.owner = *owner;
      }
    }
    throw describe_open_failure(f, permissions_);
  }
}

void PerfEventSet::attach(int fd, size_t cpu_index, pid_t pid, size_t member) {
  auto& buffer = buffers_[cpu_index];
  if (members_[member].output == EventOutput::None) {
    // No buffer: the kernel keeps its overflows for whoever is attached to the event.
  } else if (!buffer) {
    try {
      buffer = std::make_unique<MappedRingBuffer>(fd, mmap_pages_, aux_pages_);
    } catch (const std::system_error& e) {
      const int err = e.code().value();
      if (err == EPERM)
        throw PerfEventError(
            Kind::BufferSize, err,
            buffer_refused_message(LockBudget::of_this_process(permissions_),
                                   static_cast<uint32_t>(cpus_.size()), mmap_pages_));
      throw PerfEventError(Kind::Other, err, std::string(e.what()) + " (" + errno_name(err) + ")");
    }
  } else if (::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, buffer->fd()) != 0) {
    const int err = errno;
    throw PerfEventError(Kind::Other, err,
                         "redirecting event " + members_[member].name + " of process " +
                             std::to_string(pid) + " into the ring buffer of CPU " +
                             std::to_string(cpus_[cpu_index]) + " failed: " + errno_name(err));
  }
  uint64_t id = 0;
  if (::ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0) ids_[member].push_back(id);
}

void PerfEventSet::enable() {
  enabled_ = true;
  for (const Event& e : events_) ::ioctl(e.fd, PERF_EVENT_IOC_ENABLE, 0);
}

void PerfEventSet::disable() {
  enabled_ = false;
  for (const Event& e : events_) ::ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0);
}

void PerfEventSet::close_cpu(size_t cpu_index) {
  if (cpu_index >= cpus_.size() || closed_[cpu_index]) return;
  for (auto it = events_.begin(); it != events_.end();) {
    if (static_cast<size_t>(it->cpu_index) == cpu_index) {
      ::close(it->fd);
      it = events_.erase(it);
    } else {
      ++it;
    }
  }
  buffers_[cpu_index].reset();
  closed_[cpu_index] = true;
}

size_t PerfEventSet::open_cpu(int cpu) {
  if (target_.kind != TargetKind::SystemWide)
    throw PerfEventError(Kind::Other, 0,
                         "only a system-wide collection follows CPUs coming online");
  const size_t index = cpus_.size();
  cpus_.push_back(cpu);
  buffers_.emplace_back();
  closed_.push_back(false);
  const size_t before = events_.size();
  try {
    for (size_t m = 0; m < members_.size(); ++m) open_one(-1, -1, index, m);
  } catch (...) {
    close_cpu(index);
    throw;
  }
  if (enabled_) {
    for (size_t i = before; i < events_.size(); ++i)
      ::ioctl(events_[i].fd, PERF_EVENT_IOC_ENABLE, 0);
  }
  return index;
}

std::vector<int> PerfEventSet::open_cpus() const {
  std::vector<int> out(cpus_.size(), -1);
  for (size_t i = 0; i < cpus_.size(); ++i)
    if (!closed_[i]) out[i] = cpus_[i];
  return out;
}

RingBuffer* PerfEventSet::ring_buffer(size_t cpu_index) {
  return cpu_index < buffers_.size() && buffers_[cpu_index] ? &buffers_[cpu_index]->reader()
                                                            : nullptr;
}

std::vector<int> PerfEventSet::fds_of_cpu(size_t cpu_index, size_t member) const {
  std::vector<int> out;
  for (const Event& e : events_)
    if (static_cast<size_t>(e.cpu_index) == cpu_index && e.member == member) out.push_back(e.fd);
  return out;
}

std::vector<int> PerfEventSet::pollable_fds() const {
  std::vector<int> fds;
  for (const auto& b : buffers_)
    if (b) fds.push_back(b->fd());
  return fds;
}

std::vector<RingBuffer*> PerfEventSet::ring_buffers() {
  std::vector<RingBuffer*> out;
  for (auto& b : buffers_)
    if (b) out.push_back(&b->reader());
  return out;
}

std::vector<AuxBuffer*> PerfEventSet::aux_buffers() {
  std::vector<AuxBuffer*> out;
  for (auto& b : buffers_)
    if (b) out.push_back(b->has_aux() ? &b->aux() : nullptr);
  return out;
}

size_t PerfEventSet::live_event_count() const {
  std::vector<pollfd> fds;
  fds.reserve(events_.size());
  for (const Event& e : events_) fds.push_back(pollfd{e.fd, 0, 0});
  if (fds.empty()) return 0;
  if (::poll(fds.data(), fds.size(), 0) < 0) return fds.size();
  return static_cast<size_t>(std::count_if(fds.begin(), fds.end(), [](const pollfd& p) {
    return (p.revents & (POLLHUP | POLLERR)) == 0;
  }));
}

std::vector<int> PerfEventSet::fds(size_t member) const {
  std::vector<int> out;
  for (const Event& e : events_) {
    if (e.member == member) out.push_back(e.fd);
  }
  return out;
}

}  // namespace profcollect
