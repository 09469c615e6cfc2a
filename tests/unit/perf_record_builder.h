// Builds synthetic perf.data records and whole files for the reader's unit tests, written from
// the kernel's and perf's documented layouts (include/uapi/linux/perf_event.h, perf.data-file-
// format.txt) independently of the reader's code. Little-endian, like every host we run on.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace profcollect::perfbuild {

// Appends little-endian fields.
class Bytes {
 public:
  Bytes& u8(uint8_t v) { return raw(&v, 1); }
  Bytes& u16(uint16_t v) { return raw(&v, 2); }
  Bytes& u32(uint32_t v) { return raw(&v, 4); }
  Bytes& u64(uint64_t v) { return raw(&v, 8); }
  Bytes& raw(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    data.insert(data.end(), b, b + n);
    return *this;
  }
  Bytes& append(const std::vector<uint8_t>& v) { return raw(v.data(), v.size()); }
  Bytes& zeros(size_t n) {
    data.insert(data.end(), n, 0);
    return *this;
  }
  // A NUL-terminated string padded with zeros to a multiple of `align` bytes.
  Bytes& cstr(const std::string& s, size_t align = 8) {
    raw(s.data(), s.size());
    size_t n = s.size() + 1;
    zeros(1 + ((n + align - 1) / align * align - n));
    return *this;
  }
  // perf's header string: u32 padded length, then the padded string.
  Bytes& perf_string(const std::string& s) {
    uint32_t len = static_cast<uint32_t>((s.size() + 1 + 63) / 64 * 64);
    u32(len);
    raw(s.data(), s.size());
    return zeros(len - s.size());
  }
  size_t size() const { return data.size(); }
  std::vector<uint8_t> data;
};

// sample_type bits (uapi perf_event.h).
enum : uint64_t {
  IP = 1ULL << 0,
  TID = 1ULL << 1,
  TIME = 1ULL << 2,
  ADDR = 1ULL << 3,
  READ = 1ULL << 4,
  CALLCHAIN = 1ULL << 5,
  ID = 1ULL << 6,
  CPU = 1ULL << 7,
  PERIOD = 1ULL << 8,
  STREAM_ID = 1ULL << 9,
  RAW = 1ULL << 10,
  BRANCH_STACK = 1ULL << 11,
  REGS_USER = 1ULL << 12,
  STACK_USER = 1ULL << 13,
  WEIGHT = 1ULL << 14,
  DATA_SRC = 1ULL << 15,
  IDENTIFIER = 1ULL << 16,
  TRANSACTION = 1ULL << 17,
  REGS_INTR = 1ULL << 18,
  PHYS_ADDR = 1ULL << 19,
  AUX = 1ULL << 20,
  CGROUP = 1ULL << 21,
  DATA_PAGE_SIZE = 1ULL << 22,
  CODE_PAGE_SIZE = 1ULL << 23,
  WEIGHT_STRUCT = 1ULL << 24,
};
// read_format bits.
enum : uint64_t {
  FMT_ENABLED = 1,
  FMT_RUNNING = 2,
  FMT_ID = 4,
  FMT_GROUP = 8,
  FMT_LOST = 16,
};
// branch_sample_type bits that change the layout.
constexpr uint64_t kBranchHwIndex = 1ULL << 17;
constexpr uint64_t kBranchCounters = 1ULL << 19;
// attr flag bits.
constexpr uint64_t kFlagExcludeUser = 1ULL << 4, kFlagExcludeKernel = 1ULL << 5,
                   kFlagExcludeHv = 1ULL << 6, kFlagFreq = 1ULL << 10,
                   kFlagSampleIdAll = 1ULL << 18, kFlagExcludeGuest = 1ULL << 20;
constexpr uint64_t precise_ip(unsigned level) { return uint64_t{level & 3} << 15; }

struct Attr {
  uint32_t type = 1;    // software
  uint64_t config = 0;  // cpu-clock
  uint64_t sample_period = 4000;
  uint64_t sample_type = IP | TID | TIME | PERIOD;
  uint64_t read_format = 0;
  uint64_t flags = kFlagSampleIdAll;
  uint64_t branch_sample_type = 0;
  uint64_t sample_regs_user = 0;
  uint64_t sample_regs_intr = 0;
  uint32_t size = 128;  // perf_event_attr size as written (VER7)

  std::vector<uint8_t> bytes() const {
    Bytes b;
    b.u32(type).u32(size).u64(config).u64(sample_period).u64(sample_type).u64(read_format);
    b.u64(flags).u32(0).u32(0).u64(0).u64(0).u64(branch_sample_type).u64(sample_regs_user);
    b.u32(0).u32(0).u64(sample_regs_intr);
    b.zeros(128 - b.size());
    b.data.resize(size);
    return std::move(b.data);
  }
};

struct Branch {
  uint64_t from, to, flags;
};

// Every field a sample can carry; what is written depends on the attr.
struct Sample {
  uint64_t identifier = 0, ip = 0, addr = 0, id = 0, stream_id = 0, period = 0;
  uint32_t pid = 0, tid = 0, cpu = 0;
  uint64_t time = 0;
  std::vector<uint64_t> read_values;  // value/enabled/running/id/lost words, already laid out
  std::vector<uint64_t> callchain;
  std::vector<uint8_t> raw;  // padded by the builder so that u32 + data is 8-aligned
  uint64_t hw_idx = 0;
  std::vector<Branch> branches;
  std::vector<uint64_t> branch_counters;
  uint64_t regs_user_abi = 0;
  std::vector<uint64_t> regs_user;
  std::vector<uint8_t> stack_user;
  uint64_t stack_dyn_size = 0;
  uint64_t weight = 0, data_src = 0, transaction = 0;
  uint64_t regs_intr_abi = 0;
  std::vector<uint64_t> regs_intr;
  uint64_t phys_addr = 0, cgroup = 0, data_page_size = 0, code_page_size = 0;
  std::vector<uint8_t> aux;
};

inline std::vector<uint8_t> record(uint32_t type, uint16_t misc, const Bytes& body) {
  Bytes r;
  r.u32(type).u16(misc).u16(static_cast<uint16_t>(8 + body.size())).append(body.data);
  return std::move(r.data);
}

inline Bytes sample_body(const Sample& s, const Attr& a) {
  const uint64_t st = a.sample_type;
  Bytes b;
  if (st & IDENTIFIER) b.u64(s.identifier);
  if (st & IP) b.u64(s.ip);
  if (st & TID) b.u32(s.pid).u32(s.tid);
  if (st & TIME) b.u64(s.time);
  if (st & ADDR) b.u64(s.addr);
  if (st & ID) b.u64(s.id);
  if (st & STREAM_ID) b.u64(s.stream_id);
  if (st & CPU) b.u32(s.cpu).u32(0);
  if (st & PERIOD) b.u64(s.period);
  if (st & READ)
    for (uint64_t v : s.read_values) b.u64(v);
  if (st & CALLCHAIN) {
    b.u64(s.callchain.size());
    for (uint64_t ip : s.callchain) b.u64(ip);
  }
  if (st & RAW) {
    std::vector<uint8_t> raw = s.raw;
    while ((4 + raw.size()) % 8) raw.push_back(0);
    b.u32(static_cast<uint32_t>(raw.size())).append(raw);
  }
  if (st & BRANCH_STACK) {
    b.u64(s.branches.size());
    if (a.branch_sample_type & kBranchHwIndex) b.u64(s.hw_idx);
    for (const Branch& e : s.branches) b.u64(e.from).u64(e.to).u64(e.flags);
    if (a.branch_sample_type & kBranchCounters)
      for (size_t i = 0; i < s.branches.size(); ++i)
        b.u64(i < s.branch_counters.size() ? s.branch_counters[i] : 0);
  }
  if (st & REGS_USER) {
    b.u64(s.regs_user_abi);
    if (s.regs_user_abi)
      for (uint64_t r : s.regs_user) b.u64(r);
  }
  if (st & STACK_USER) {
    b.u64(s.stack_user.size());
    if (!s.stack_user.empty()) b.append(s.stack_user).u64(s.stack_dyn_size);
  }
  if (st & (WEIGHT | WEIGHT_STRUCT)) b.u64(s.weight);
  if (st & DATA_SRC) b.u64(s.data_src);
  if (st & TRANSACTION) b.u64(s.transaction);
  if (st & REGS_INTR) {
    b.u64(s.regs_intr_abi);
    if (s.regs_intr_abi)
      for (uint64_t r : s.regs_intr) b.u64(r);
  }
  if (st & PHYS_ADDR) b.u64(s.phys_addr);
  if (st & CGROUP) b.u64(s.cgroup);
  if (st & DATA_PAGE_SIZE) b.u64(s.data_page_size);
  if (st & CODE_PAGE_SIZE) b.u64(s.code_page_size);
  if (st & AUX) b.u64(s.aux.size()).append(s.aux);
  return b;
}

inline std::vector<uint8_t> sample(const Sample& s, const Attr& a, uint16_t misc = 2) {
  return record(9, misc, sample_body(s, a));
}

// The sample_id_all trailer of non-sample records.
struct SampleId {
  uint32_t pid = 0, tid = 0, cpu = 0;
  uint64_t time = 0, id = 0, stream_id = 0;
};
inline Bytes& trailer(Bytes& b, const SampleId& t, const Attr& a) {
  if (!(a.flags & kFlagSampleIdAll)) return b;
  const uint64_t st = a.sample_type;
  if (st & TID) b.u32(t.pid).u32(t.tid);
  if (st & TIME) b.u64(t.time);
  if (st & ID) b.u64(t.id);
  if (st & STREAM_ID) b.u64(t.stream_id);
  if (st & CPU) b.u32(t.cpu).u32(0);
  if (st & IDENTIFIER) b.u64(t.id);
  return b;
}

inline std::vector<uint8_t> mmap(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                                 const std::string& file, const SampleId& t, const Attr& a,
                                 uint16_t misc = 2) {
  Bytes b;
  b.u32(pid).u32(pid).u64(start).u64(len).u64(pgoff).cstr(file);
  return record(1, misc, trailer(b, t, a));
}

struct Mmap2 {
  uint32_t pid = 0, tid = 0;
  uint64_t start = 0, len = 0, pgoff = 0;
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0, ino_generation = 0;
  std::vector<uint8_t> build_id = {};  // non-empty: the build-id form (misc bit 14)
  uint32_t prot = 5, flags = 2;
  std::string file;
};
inline std::vector<uint8_t> mmap2(const Mmap2& m, const SampleId& t, const Attr& a,
                                  uint16_t misc = 2) {
  Bytes b;
  b.u32(m.pid).u32(m.tid).u64(m.start).u64(m.len).u64(m.pgoff);
  if (!m.build_id.empty()) {
    misc |= 1 << 14;
    b.u8(static_cast<uint8_t>(m.build_id.size())).u8(0).u16(0).append(m.build_id);
    b.zeros(20 - m.build_id.size());
  } else {
    b.u32(m.maj).u32(m.min).u64(m.ino).u64(m.ino_generation);
  }
  b.u32(m.prot).u32(m.flags).cstr(m.file);
  return record(10, misc, trailer(b, t, a));
}

inline std::vector<uint8_t> comm(uint32_t pid, uint32_t tid, const std::string& name, bool exec,
                                 const SampleId& t, const Attr& a) {
  Bytes b;
  b.u32(pid).u32(tid).cstr(name);
  return record(3, exec ? 1 << 13 : 0, trailer(b, t, a));
}

inline std::vector<uint8_t> task(bool exit, uint32_t pid, uint32_t ppid, uint32_t tid,
                                 uint32_t ptid, uint64_t time, const SampleId& t, const Attr& a) {
  Bytes b;
  b.u32(pid).u32(ppid).u32(tid).u32(ptid).u64(time);
  return record(exit ? 4 : 7, 0, trailer(b, t, a));
}

inline std::vector<uint8_t> lost(uint64_t id, uint64_t n, const SampleId& t, const Attr& a) {
  Bytes b;
  b.u64(id).u64(n);
  return record(2, 0, trailer(b, t, a));
}

inline std::vector<uint8_t> lost_samples(uint64_t n, const SampleId& t, const Attr& a) {
  Bytes b;
  b.u64(n);
  return record(13, 0, trailer(b, t, a));
}

inline std::vector<uint8_t> throttle(bool unthrottle, uint64_t time, uint64_t id, const SampleId& t,
                                     const Attr& a) {
  Bytes b;
  b.u64(time).u64(id).u64(0);
  return record(unthrottle ? 6 : 5, 0, trailer(b, t, a));
}

// A kernel record the reader does not model (PERF_RECORD_SWITCH: no body beyond the trailer).
inline std::vector<uint8_t> context_switch(const SampleId& t, const Attr& a) {
  Bytes b;
  return record(14, 0, trailer(b, t, a));
}

inline std::vector<uint8_t> finished_round() { return record(68, 0, {}); }

inline std::vector<uint8_t> header_attr(const Attr& a, const std::vector<uint64_t>& ids) {
  Bytes b;
  b.append(a.bytes());
  for (uint64_t id : ids) b.u64(id);
  return record(64, 0, b);
}

inline std::vector<uint8_t> header_feature(uint64_t feature, const Bytes& content) {
  Bytes b;
  b.u64(feature).append(content.data);
  return record(80, 0, b);
}

inline std::vector<uint8_t> build_id_record(uint32_t pid, const std::vector<uint8_t>& id,
                                            const std::string& file, uint16_t misc = 2) {
  Bytes b;
  b.u32(pid).append(id).zeros(20 - id.size()).u8(static_cast<uint8_t>(id.size())).u8(0).u16(0);
  b.cstr(file, 64);
  return record(67, misc | (1 << 15), b);
}

inline std::vector<uint8_t> event_update_name(uint64_t id, const std::string& name) {
  Bytes b;
  b.u64(2).u64(id).cstr(name);
  return record(78, 0, b);
}

inline std::vector<uint8_t> id_index(const std::vector<std::pair<uint64_t, uint64_t>>& id_idx) {
  Bytes b;
  b.u64(id_idx.size());
  for (auto [id, idx] : id_idx) b.u64(id).u64(idx).u64(0).u64(0);
  return record(69, 0, b);
}

// PERF_RECORD_AUXTRACE and its payload, which its size does not count.
inline std::vector<uint8_t> auxtrace(const std::vector<uint8_t>& payload) {
  Bytes b;
  b.u64(payload.size()).u64(0).u64(0).u32(0).u32(0).u32(0).u32(0);
  std::vector<uint8_t> r = record(71, 0, b);
  r.insert(r.end(), payload.begin(), payload.end());
  return r;
}

// HEADER_TRACING_DATA and its payload (a multiple of 8 bytes).
inline std::vector<uint8_t> tracing_data(const std::vector<uint8_t>& payload) {
  Bytes b;
  b.u32(static_cast<uint32_t>(payload.size())).u32(0);
  std::vector<uint8_t> r = record(66, 0, b);
  r.insert(r.end(), payload.begin(), payload.end());
  return r;
}

// PERF_RECORD_COMPRESSED: the payload as is, so the record's size need not be a multiple of 8
// (which is why perf 6.15 added COMPRESSED2).
inline std::vector<uint8_t> compressed(const std::vector<uint8_t>& zstd_bytes) {
  Bytes b;
  b.append(zstd_bytes);
  return record(81, 0, b);
}

// PERF_RECORD_COMPRESSED2: u64 data_size, the payload, zero padding to 8 bytes.
inline std::vector<uint8_t> compressed2(const std::vector<uint8_t>& zstd_bytes) {
  Bytes b;
  b.u64(zstd_bytes.size()).append(zstd_bytes);
  while ((8 + b.size()) % 8) b.u8(0);
  return record(83, 0, b);
}

inline std::vector<uint8_t> concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// HEADER_EVENT_DESC feature content.
inline Bytes event_desc(
    const std::vector<std::pair<Attr, std::pair<std::string, std::vector<uint64_t>>>>& ev) {
  Bytes b;
  b.u32(static_cast<uint32_t>(ev.size())).u32(128);
  for (const auto& [attr, name_ids] : ev) {
    Attr a = attr;
    a.size = 128;
    b.append(a.bytes()).u32(static_cast<uint32_t>(name_ids.second.size()));
    b.perf_string(name_ids.first);
    for (uint64_t id : name_ids.second) b.u64(id);
  }
  return b;
}

// A whole pipe-mode stream: the 16-byte header, then the records.
inline std::vector<uint8_t> pipe_file(const std::vector<uint8_t>& records) {
  Bytes b;
  b.raw("PERFILE2", 8).u64(16).append(records);
  return std::move(b.data);
}

// A whole file-mode perf.data: header, the attr ids, the attrs, the data, the feature sections.
struct FileFeature {
  unsigned bit;
  Bytes content;
};
inline std::vector<uint8_t> perf_file(
    const std::vector<std::pair<Attr, std::vector<uint64_t>>>& attrs,
    const std::vector<uint8_t>& data, const std::vector<FileFeature>& features = {},
    bool zero_data_size = false) {
  const uint64_t header = 104;
  Bytes ids;
  std::vector<uint64_t> id_offsets;
  for (const auto& [a, list] : attrs) {
    id_offsets.push_back(header + ids.size());
    for (uint64_t id : list) ids.u64(id);
  }
  const uint64_t attrs_offset = header + ids.size();
  Bytes attr_section;
  for (size_t i = 0; i < attrs.size(); ++i) {
    attr_section.append(attrs[i].first.bytes());
    attr_section.u64(id_offsets[i]).u64(attrs[i].second.size() * 8);
  }
  const uint64_t entry = attrs.empty() ? 144 : attrs[0].first.size + 16;
  const uint64_t data_offset = attrs_offset + attr_section.size();
  uint64_t bitmap[4] = {0, 0, 0, 0};
  for (const auto& f : features) bitmap[f.bit / 64] |= 1ULL << (f.bit % 64);

  Bytes b;
  b.raw("PERFILE2", 8).u64(header).u64(entry);
  b.u64(attrs_offset).u64(attr_section.size());
  b.u64(data_offset).u64(zero_data_size ? 0 : data.size());
  b.u64(0).u64(0);
  for (uint64_t w : bitmap) b.u64(w);
  b.append(ids.data).append(attr_section.data).append(data);
  // Feature sections, in bit order: the table, then the contents.
  std::vector<FileFeature> sorted = features;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& x, const auto& y) { return x.bit < y.bit; });
  uint64_t content_at = b.size() + 16 * sorted.size();
  for (const auto& f : sorted) {
    b.u64(content_at).u64(f.content.size());
    content_at += f.content.size();
  }
  for (const auto& f : sorted) b.append(f.content.data);
  return std::move(b.data);
}

inline void write_file(const std::filesystem::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

}  // namespace profcollect::perfbuild
