#include "collector/live/synthetic_records.h"

#include <linux/perf_event.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace profcollect {

namespace {

template <typename T>
void put(std::vector<uint8_t>& out, T value) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

// A NUL-terminated string padded with NULs to a multiple of 8 bytes.
void put_string(std::vector<uint8_t>& out, std::string_view s) {
  const size_t padded = (s.size() + 1 + 7) & ~size_t{7};
  const size_t at = out.size();
  out.resize(at + padded, 0);
  std::memcpy(out.data() + at, s.data(), s.size());
}

// Starts a record; finish() fills in its size.
size_t begin(std::vector<uint8_t>& out, uint32_t type, uint16_t misc) {
  const size_t at = out.size();
  put<uint32_t>(out, type);
  put<uint16_t>(out, misc);
  put<uint16_t>(out, 0);
  return at;
}

void finish(std::vector<uint8_t>& out, size_t at) {
  const size_t size = out.size() - at;
  if (size > UINT16_MAX)
    throw std::length_error("synthesized record of " + std::to_string(size) +
                            " bytes exceeds the 64 KiB record limit");
  const auto s = static_cast<uint16_t>(size);
  std::memcpy(out.data() + at + 6, &s, sizeof s);
}

}  // namespace

void append_sample_id(std::vector<uint8_t>& out, const SampleIdLayout& layout,
                      const SampleIdValues& v) {
  if (!layout.sample_id_all) return;
  const uint64_t st = layout.sample_type;
  if (st & PERF_SAMPLE_TID) {
    put<uint32_t>(out, v.pid);
    put<uint32_t>(out, v.tid);
  }
  if (st & PERF_SAMPLE_TIME) put<uint64_t>(out, v.time);
  if (st & PERF_SAMPLE_ID) put<uint64_t>(out, v.id);
  if (st & PERF_SAMPLE_STREAM_ID) put<uint64_t>(out, v.id);
  if (st & PERF_SAMPLE_CPU) {
    put<uint32_t>(out, v.cpu);
    put<uint32_t>(out, 0);
  }
  if (st & PERF_SAMPLE_IDENTIFIER) put<uint64_t>(out, v.id);
}

void append_mmap2_record(std::vector<uint8_t>& out, const SampleIdLayout& layout, uint32_t pid,
                         uint32_t tid, const ProcMapsEntry& m) {
  uint16_t misc = PERF_RECORD_MISC_USER;
  if (!m.executable()) misc |= PERF_RECORD_MISC_MMAP_DATA;
  const size_t at = begin(out, PERF_RECORD_MMAP2, misc);
  put<uint32_t>(out, pid);
  put<uint32_t>(out, tid);
  put<uint64_t>(out, m.start);
  put<uint64_t>(out, m.end - m.start);
  put<uint64_t>(out, m.pgoff);
  put<uint32_t>(out, m.maj);
  put<uint32_t>(out, m.min);
  put<uint64_t>(out, m.ino);
  put<uint64_t>(out, 0);  // ino_generation: /proc does not show it
  put<uint32_t>(out, m.prot);
  put<uint32_t>(out, m.flags);
  // Anonymous executable memory (JIT code) is "//anon" in the kernel's records.
  put_string(out, m.path.empty() ? std::string_view("//anon") : std::string_view(m.path));
  append_sample_id(out, layout, SampleIdValues{pid, tid});
  finish(out, at);
}

void append_comm_record(std::vector<uint8_t>& out, const SampleIdLayout& layout, uint32_t pid,
                        uint32_t tid, std::string_view comm, bool exec) {
  const size_t at = begin(out, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
  put<uint32_t>(out, pid);
  put<uint32_t>(out, tid);
  put_string(out, comm);
  append_sample_id(out, layout, SampleIdValues{pid, tid});
  finish(out, at);
}

}  // namespace profcollect
