// Raw kernel-format records made in user space, for what the kernel never reports: the
// mappings and names of processes that ran before the events were opened (perf's "synthesized"
// records). They carry the same sample_id_all trailer as the kernel's records of the attr, so
// they pass through the same RecordDecoder and TimeOrderer. A time of 0 marks them untimed: the
// TimeOrderer keeps them ahead of everything read later.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "collector/host/proc_maps.h"

namespace profcollect {

// The trailer layout of the attr the records go with.
struct SampleIdLayout {
  uint64_t sample_type = 0;
  bool sample_id_all = false;
};

// What the trailer says: pid/tid of the record, time 0 (unknown), id 0 (the first attr).
struct SampleIdValues {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint32_t cpu = 0;
};

// PERF_RECORD_MMAP2 of one /proc maps line, user mode, with device and inode (no build-id:
// the mapper reads it from the file). Non-executable mappings get PERF_RECORD_MISC_MMAP_DATA,
// as the kernel marks them.
void append_mmap2_record(std::vector<uint8_t>& out, const SampleIdLayout& layout, uint32_t pid,
                         uint32_t tid, const ProcMapsEntry& mapping);

// PERF_RECORD_COMM; `exec` sets PERF_RECORD_MISC_COMM_EXEC.
void append_comm_record(std::vector<uint8_t>& out, const SampleIdLayout& layout, uint32_t pid,
                        uint32_t tid, std::string_view comm, bool exec = false);

// The sample_id_all trailer alone (nothing when the layout has none), for test record builders.
void append_sample_id(std::vector<uint8_t>& out, const SampleIdLayout& layout,
                      const SampleIdValues& values);

}  // namespace profcollect
