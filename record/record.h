// Typed records: what every record source (perf.data file, live ring buffers, perf script text)
// yields, and what the mapper and aggregators consume. Nothing downstream knows which source a
// record came from.
//
// Records are views: strings and branch stacks point into the source's buffer and stay valid
// only until the source's next() is called again. That keeps the per-sample path free of
// allocation; a consumer that needs to keep a string copies it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "record/build_id.h"

namespace profcollect {

// perf_event_header.misc cpumode values (include/uapi/linux/perf_event.h).
enum class CpuMode : uint8_t {
  Unknown = 0,
  Kernel = 1,
  User = 2,
  Hypervisor = 3,
  GuestKernel = 4,
  GuestUser = 5,
};

// One entry of a branch stack, exactly as the kernel lays it out (struct perf_branch_entry).
struct BranchEntry {
  uint64_t from;
  uint64_t to;
  uint64_t flags;  // mispred:1 predicted:1 in_tx:1 abort:1 cycles:16 type:4 spec:2 ...

  bool mispredicted() const { return flags & 1; }
  bool predicted() const { return flags & 2; }
  bool in_tx() const { return flags & 4; }
  bool abort() const { return flags & 8; }
  uint16_t cycles() const { return static_cast<uint16_t>((flags >> 4) & 0xffff); }
  uint8_t type() const { return static_cast<uint8_t>((flags >> 20) & 0xf); }
  uint8_t spec() const { return static_cast<uint8_t>((flags >> 24) & 0x3); }
};
static_assert(sizeof(BranchEntry) == 24);

// Fields every record may carry through sample_id_all; absent ones are kNone.
inline constexpr uint32_t kNoPid = UINT32_MAX;
inline constexpr uint64_t kNoTime = UINT64_MAX;

struct SampleRecord {
  uint32_t pid = kNoPid;
  uint32_t tid = kNoPid;
  uint64_t time = kNoTime;
  uint64_t ip = 0;
  uint64_t addr = 0;
  uint64_t period = 1;  // 1 when the attr has no PERIOD field (perf prints the attr's period)
  uint64_t id = 0;      // sample id (IDENTIFIER/ID), 0 when absent
  uint32_t cpu = UINT32_MAX;
  uint32_t attr_index = 0;  // index into SessionInfo::attrs
  CpuMode cpumode = CpuMode::Unknown;
  bool exact_ip = false;
  bool has_branch_stack = false;
  bool has_hw_idx = false;
  uint64_t hw_idx = 0;
  std::span<const BranchEntry> branches;  // newest first
};

// MMAP and MMAP2 alike. For MMAP (no prot), `executable` comes from the misc bit
// PERF_RECORD_MISC_MMAP_DATA being clear.
struct MmapRecord {
  uint32_t pid = kNoPid;
  uint32_t tid = kNoPid;
  uint64_t time = kNoTime;
  uint64_t start = 0;
  uint64_t len = 0;
  uint64_t pgoff = 0;  // bytes
  bool is_mmap2 = false;
  bool executable = true;
  CpuMode cpumode = CpuMode::Unknown;
  // MMAP2: either device/inode or a build-id (PERF_RECORD_MISC_MMAP_BUILD_ID).
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0, ino_generation = 0;
  uint32_t prot = 0, flags = 0;
  BuildId build_id;  // empty unless the record carried one
  // MMAP2 flagged as carrying a build-id whose body is not one (the kernel's stale misc bit):
  // read as device/inode, matched by name.
  bool build_id_flag_ignored = false;
  std::string_view filename;
};

struct CommRecord {
  uint32_t pid = kNoPid;
  uint32_t tid = kNoPid;
  uint64_t time = kNoTime;
  bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC
  std::string_view comm;
};

// FORK and EXIT share a layout.
struct TaskRecord {
  bool is_exit = false;
  uint32_t pid = kNoPid, ppid = kNoPid;
  uint32_t tid = kNoPid, ptid = kNoPid;
  uint64_t time = kNoTime;
};

// PERF_RECORD_LOST (ring buffer overrun) and PERF_RECORD_LOST_SAMPLES (dropped in the kernel).
struct LostRecord {
  bool is_lost_samples = false;
  uint64_t id = 0;
  uint64_t lost = 0;
  uint64_t time = kNoTime;
};

struct ThrottleRecord {
  bool unthrottle = false;
  uint64_t time = kNoTime;
  uint64_t id = 0;
  uint64_t stream_id = 0;
};

// PERF_RECORD_AUX: the kernel wrote `aux_size` bytes of hardware trace (Arm SPE, Intel PT) into
// the AUX area, starting at `aux_offset` of the area's byte stream (a running position, like
// data_head: the place in the area is aux_offset modulo its size). `flags` says what went wrong
// on the way (PERF_AUX_FLAG_*): the bits are the kernel's, the PMU's data format in bits 8-15.
struct AuxRecord {
  static constexpr uint64_t kTruncated = 0x01;  // the area was full: data lost after these bytes
  static constexpr uint64_t kOverwrite = 0x02;  // snapshot mode: the bytes overwrote older ones
  static constexpr uint64_t kPartial = 0x04;    // the hardware left a gap in the data
  static constexpr uint64_t kCollision = 0x08;  // samples collided (Arm SPE)
  static constexpr uint64_t kPmuFormatMask = 0xff00;

  uint64_t aux_offset = 0;
  uint64_t aux_size = 0;
  uint64_t flags = 0;
  uint64_t time = kNoTime;
  uint64_t id = 0;  // of the event, from the sample_id_all trailer; 0 when absent

  bool truncated() const { return flags & kTruncated; }
  bool overwrite() const { return flags & kOverwrite; }
  bool partial() const { return flags & kPartial; }
  bool collision() const { return flags & kCollision; }
  uint8_t pmu_format() const { return static_cast<uint8_t>((flags & kPmuFormatMask) >> 8); }
};

// Every record a source knows but the profiler has no use for (context switches, namespaces,
// ksymbol, ...); kept so that counts and offsets can be reported.
struct OtherRecord {
  uint32_t type = 0;
  uint64_t time = kNoTime;
};

using Record = std::variant<SampleRecord, MmapRecord, CommRecord, TaskRecord, LostRecord,
                            ThrottleRecord, AuxRecord, OtherRecord>;

}  // namespace profcollect
