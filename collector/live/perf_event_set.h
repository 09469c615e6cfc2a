// The events of a collection opened for a target on every online CPU, with one ring buffer per
// CPU. A set holds one or several events (members), each opened for every CPU and thread:
// the sampling event alone, or the sampling event and a side-band dummy event
// (side_band_attr.h), or a sampling event without a ring buffer (its overflows go to a BPF
// program) beside a dummy event that owns the buffers.
//
//   --pid  every thread of each process (/proc/PID/task), on every CPU, with inherit=1 so the
//          threads and children they create later are followed. The kernel refuses to map an
//          inherited event that is not bound to a CPU, hence one event per thread per CPU.
//   -- CMD the child, stopped before its exec; the attr's enable_on_exec starts the events.
//   -a     pid -1 on every CPU.
// Each CPU's first event that writes into a ring buffer owns it (maps it); the CPU's other such
// events, of every member and thread, write into it (PERF_EVENT_IOC_SET_OUTPUT, which the
// kernel allows between events of one CPU and one clock), so the event loop waits on one fd per
// CPU. Records of several members share a buffer and are told apart by the id each carries
// (ids(member), PERF_SAMPLE_IDENTIFIER).
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

#include "collector/pipeline/collection_target.h"
#include "collector/live/perf_event_error.h"
#include "collector/host/perf_permissions.h"
#include "collector/live/ring_buffer.h"

namespace profcollect {

// Where a member's records go.
enum class EventOutput {
  RingBuffer,  // its CPU's ring buffer (mapped by the first such event of the CPU)
  None,  // no ring buffer: its overflows are consumed elsewhere (a BPF program attached to it)
};

// One event of the set.
struct EventSetMember {
  perf_event_attr attr;
  std::string name;  // for messages and the session's attr names: "cpu-clock:u", "dummy:u"
  EventOutput output = EventOutput::RingBuffer;
};

struct EventSetOptions {
  uint32_t mmap_pages = 128;  // data pages per buffer, a power of two (choose_mmap_pages)
  std::vector<int> cpus;      // empty: every online CPU
  std::string event_name;     // the single attr's name (one-attr constructor): "cpu-clock:u"
  // AUX pages per buffer (0: none), a power of two of at least 2 (choose_aux_buffer_pages),
  // mapped on the event that owns the buffer: the first member must then be the AUX event
  // (Arm SPE); the CPU's other events write into its data area.
  uint32_t aux_pages = 0;
};

class PerfEventSet {
 public:
  // Opens and maps everything, disabled: for each thread and CPU, every member in order.
  // Throws PerfEventError: Permission (message names the capability or sysctl), NoProcess
  // ("no process PID"), Unsupported, TooManyFiles, BufferSize. If the kernel rejects
  // attr.build_id (before Linux 5.12) a member is opened without it and notes() says so.
  PerfEventSet(std::vector<EventSetMember> members, const CollectionTarget& target,
               const EventSetOptions& options, const PerfPermissions& permissions);
  // One member, `attr`, named options.event_name, writing into the ring buffers.
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

  // The members as opened (build_id cleared when the kernel refused it), in the given order.
  size_t member_count() const { return members_.size(); }
  const EventSetMember& member(size_t i) const { return members_[i]; }
  // The kernel's id of every event of member `i` (PERF_EVENT_IOC_ID), what IDENTIFIER carries.
  const std::vector<uint64_t>& ids(size_t i) const { return ids_[i]; }
  // The first member's attr and ids.
  const perf_event_attr& attr() const { return members_[0].attr; }
  const std::vector<uint64_t>& ids() const { return ids_[0]; }
  const std::vector<int>& cpus() const { return cpus_; }
  uint32_t mmap_pages() const { return mmap_pages_; }
  size_t event_count() const { return events_.size(); }  // fds, of every member
  // The fds of member `i`, every CPU and thread (a BPF program attaches to each).
  std::vector<int> fds(size_t member) const;
  size_t thread_count() const { return thread_count_; }
  const std::vector<std::string>& notes() const { return notes_; }

  // One fd per CPU buffer, for the event loop: readable when the kernel has filled a
  // wakeup's worth (half the buffer; the loop should also drain on a timer). An fd reports
  // POLLHUP once its own thread has exited and left no inherited events, while other threads'
  // events may still write into its buffer: use live_event_count() to know when a --pid or
  // command target has ended.
  std::vector<int> pollable_fds() const;

  // The ring buffers, one per CPU, in cpus() order (for LiveRecordSource); none when no member
  // writes into one.
  std::vector<RingBuffer*> ring_buffers();
  // Their AUX areas, in the same order (null where none is mapped).
  std::vector<AuxBuffer*> aux_buffers();

  // CPU hotplug, for a system-wide set (the kernel neither moves a CPU's events elsewhere when
  // it goes offline nor revives them when it comes back):
  //   close_cpu()  closes the events of the CPU at `cpu_index` and unmaps its buffer (read it a
  //                last time first, and forget its RingBuffer: the pointer dies here)
  //   open_cpu()   opens every member on `cpu` with a buffer of its own, enabled when the set
  //                is; returns the new cpu index (the next one: indices are never reused).
  //                Throws PerfEventError.
  void close_cpu(size_t cpu_index);
  size_t open_cpu(int cpu);
  // The CPU of every index whose events are open, and -1 for the closed ones.
  std::vector<int> open_cpus() const;
  RingBuffer* ring_buffer(size_t cpu_index);
  // The fds of member `member` on the CPU at `cpu_index`.
  std::vector<int> fds_of_cpu(size_t cpu_index, size_t member) const;

  // Events whose thread (or an inherited child of it) still lives: polls every event fd
  // without waiting and counts those without POLLHUP. System-wide events never hang up.
  size_t live_event_count() const;

 private:
  struct Event {
    int fd;
    int cpu_index;
    pid_t tid;
    size_t member;
  };
  // Closes the fds even when the constructor throws part way.
  struct EventList : std::vector<Event> {
    ~EventList();
  };

  bool open_thread(pid_t pid, pid_t tid);
  int open_one(pid_t pid, pid_t tid, size_t cpu_index, size_t member);
  void attach(int fd, size_t cpu_index, pid_t pid, size_t member);

  std::vector<EventSetMember> members_;
  std::vector<size_t> opened_;  // events opened per member
  CollectionTarget target_;
  PerfPermissions permissions_;
  uint32_t mmap_pages_;
  uint32_t aux_pages_;
  std::vector<int> cpus_;
  EventList events_;
  std::vector<std::unique_ptr<MappedRingBuffer>> buffers_;  // by cpu index
  std::vector<std::vector<uint64_t>> ids_;                  // by member
  std::vector<std::string> notes_;
  size_t thread_count_ = 0;
  bool raised_fd_limit_ = false;
  bool enabled_ = false;
  std::vector<bool> closed_;  // by cpu index
};

}  // namespace profcollect
