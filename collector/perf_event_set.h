// The sampling event opened for a target on every online CPU, with one ring buffer per CPU.
//
//   --pid  every thread of each process (/proc/PID/task), on every CPU, with inherit=1 so the
//          threads and children they create later are followed. The kernel refuses to map an
//          inherited event that is not bound to a CPU, hence one event per thread per CPU.
//   -- CMD the child, stopped before its exec; the attr's enable_on_exec starts the events.
//   -a     pid -1 on every CPU.
// Each CPU's first event owns its ring buffer; the CPU's other events write into it
// (PERF_EVENT_IOC_SET_OUTPUT), so the event loop waits on one fd per CPU.
//
// A thread created between listing /proc/PID/task and opening the event of the thread that
// creates it is not followed (perf has the same window); its creator's later threads are.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collector/collection_target.h"
#include "collector/perf_event_error.h"
#include "collector/perf_permissions.h"
#include "collector/ring_buffer.h"

namespace profcollect {

struct EventSetOptions {
  uint32_t mmap_pages = 128;  // data pages per buffer, a power of two (choose_mmap_pages)
  std::vector<int> cpus;      // empty: every online CPU
  std::string event_name;     // for messages: "cpu-clock:u"
};

class PerfEventSet {
 public:
  // Opens and maps everything, disabled. Throws PerfEventError: Permission (message names the
  // capability or sysctl), NoProcess ("no process PID"), Unsupported, TooManyFiles, BufferSize.
  // If the kernel rejects attr.build_id (before Linux 5.12) the events are opened without it
  // and notes() says so.
  PerfEventSet(const perf_event_attr& attr, const CollectionTarget& target,
               const EventSetOptions& options, const PerfPermissions& permissions);
  ~PerfEventSet();
  PerfEventSet(const PerfEventSet&) = delete;
  PerfEventSet& operator=(const PerfEventSet&) = delete;

  // Starts (stops) sampling on every event, inherited ones included. --pid and -a call enable()
  // once the LiveRecordSource exists and before reading /proc; command mode never does (the
  // child's exec enables its events).
  void enable();
  void disable();

  // The attr as opened (build_id cleared when the kernel refused it).
  const perf_event_attr& attr() const { return attr_; }
  // The kernel's id of every event (PERF_EVENT_IOC_ID), what IDENTIFIER carries.
  const std::vector<uint64_t>& ids() const { return ids_; }
  const std::vector<int>& cpus() const { return cpus_; }
  uint32_t mmap_pages() const { return mmap_pages_; }
  size_t event_count() const { return events_.size(); }
  size_t thread_count() const { return thread_count_; }
  const std::vector<std::string>& notes() const { return notes_; }

  // One fd per CPU buffer, for the event loop: readable when the kernel has filled a
  // wakeup's worth (half the buffer; the loop should also drain on a timer). An fd reports
  // POLLHUP once its own thread has exited and left no inherited events, while other threads'
  // events may still write into its buffer: use live_event_count() to know when a --pid or
  // command target has ended.
  std::vector<int> pollable_fds() const;

  // The ring buffers, one per CPU, in cpus() order (for LiveRecordSource).
  std::vector<RingBuffer*> ring_buffers();

  // Events whose thread (or an inherited child of it) still lives: polls every event fd
  // without waiting and counts those without POLLHUP. System-wide events never hang up.
  size_t live_event_count() const;

 private:
  struct Event {
    int fd;
    int cpu_index;
    pid_t tid;
  };
  // Closes the fds even when the constructor throws part way.
  struct EventList : std::vector<Event> {
    ~EventList();
  };

  bool open_thread(pid_t pid, pid_t tid);
  int open_one(pid_t pid, pid_t tid, size_t cpu_index);
  void attach(int fd, size_t cpu_index, pid_t pid);

  perf_event_attr attr_;
  CollectionTarget target_;
  PerfPermissions permissions_;
  std::string event_name_;
  uint32_t mmap_pages_;
  std::vector<int> cpus_;
  EventList events_;
  std::vector<std::unique_ptr<MappedRingBuffer>> buffers_;  // by cpu index
  std::vector<uint64_t> ids_;
  std::vector<std::string> notes_;
  size_t thread_count_ = 0;
  bool raised_fd_limit_ = false;
};

}  // namespace profcollect
