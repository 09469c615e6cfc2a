#include "collector/records/record_decoder.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "collector/records/byte_cursor.h"
#include "collector/records/perf_abi.h"

namespace profcollect {

namespace abi = perf_abi;

namespace {

// The sample_id_all trailer of a non-sample record.
struct Trailer {
  uint64_t time = kNoTime;
  uint64_t id = 0;
};

// Reads the trailer and returns where the record's body ends.
size_t read_trailer(std::span<const uint8_t> rec, const SampleLayout& l, Trailer& t) {
  if (!l.sample_id_all || l.trailer_bytes == 0) return rec.size();
  if (rec.size() < abi::kEventHeaderSize + l.trailer_bytes)
    throw RecordFormatError("record of " + std::to_string(rec.size()) + " bytes cannot hold its " +
                            std::to_string(l.trailer_bytes) + "-byte sample_id trailer");
  const size_t body_end = rec.size() - l.trailer_bytes;
  ByteCursor c(rec.subspan(body_end), "sample_id trailer");
  const uint64_t st = l.sample_type;
  if (st & abi::kSampleTid) c.skip(8);
  if (st & abi::kSampleTime) t.time = c.u64();
  if (st & abi::kSampleId) t.id = c.u64();
  if (st & abi::kSampleStreamId) c.skip(8);
  if (st & abi::kSampleCpu) c.skip(8);
  if (st & abi::kSampleIdentifier) t.id = c.u64();
  return body_end;
}

void skip_read_values(ByteCursor& c, uint64_t read_format) {
  const uint64_t per_value =
      1 + ((read_format & abi::kFormatId) ? 1 : 0) + ((read_format & abi::kFormatLost) ? 1 : 0);
  const uint64_t times = ((read_format & abi::kFormatTotalTimeEnabled) ? 1 : 0) +
                         ((read_format & abi::kFormatTotalTimeRunning) ? 1 : 0);
  if (read_format & abi::kFormatGroup) {
    uint64_t nr = c.u64();
    c.skip(times * 8);
    c.skip_array(nr, per_value * 8);
  } else {
    c.skip((per_value + times) * 8);
  }
}

void skip_regs(ByteCursor& c, uint32_t words) {
  uint64_t regs_abi = c.u64();
  if (regs_abi != 0) c.skip_array(words, 8);  // PERF_SAMPLE_REGS_ABI_NONE carries no values
}

}  // namespace

uint64_t RecordDecoder::time_of(const Record& r) {
  return std::visit([](const auto& rec) { return rec.time; }, r);
}

uint64_t RecordDecoder::peek_time(const RawRecord& r) const {
  auto u64_at = [&r](size_t at) {
    if (r.bytes.size() < at + 8) {
      throw RecordFormatError("record of " + std::to_string(r.bytes.size()) +
                              " bytes ends before its time");
    }
    uint64_t v;
    std::memcpy(&v, r.bytes.data() + at, 8);
    return v;
  };
  if (r.type == abi::kSample) {
    const uint32_t attr = state_.attr_of_sample(r.bytes);
    if (attr == PerfSessionState::kUnknownAttr) return kNoTime;
    const uint64_t st = state_.layout(attr).sample_type;
    if (!(st & abi::kSampleTime)) return kNoTime;
    return u64_at(abi::kEventHeaderSize + ((st & abi::kSampleIdentifier) ? 8 : 0) +
                  ((st & abi::kSampleIp) ? 8 : 0) + ((st & abi::kSampleTid) ? 8 : 0));
  }
  const uint32_t attr = state_.attr_of_non_sample(r.bytes);
  if (attr != PerfSessionState::kUnknownAttr) {
    const SampleLayout& l = state_.layout(attr);
    if (l.sample_id_all && l.trailer_bytes != 0) {
      if (r.bytes.size() < abi::kEventHeaderSize + l.trailer_bytes) {
        throw RecordFormatError("record of " + std::to_string(r.bytes.size()) +
                                " bytes cannot hold its " + std::to_string(l.trailer_bytes) +
                                "-byte sample_id trailer");
      }
      if (l.sample_type & abi::kSampleTime) {
        return u64_at(r.bytes.size() - l.trailer_bytes +
                      ((l.sample_type & abi::kSampleTid) ? 8 : 0));
      }
    }
  }
  // FORK/EXIT and THROTTLE/UNTHROTTLE carry a time of their own, used without a trailer's.
  switch (r.type) {
    case abi::kFork:
    case abi::kExit:
      return u64_at(abi::kEventHeaderSize + 16);
    case abi::kThrottle:
    case abi::kUnthrottle:
      return u64_at(abi::kEventHeaderSize);
    default:
      return kNoTime;
  }
}

void RecordDecoder::decode_sample(const RawRecord& r, Record& out) {
  const uint32_t attr = state_.attr_of_sample(r.bytes);
  if (attr == PerfSessionState::kUnknownAttr) {
    out.emplace<OtherRecord>(OtherRecord{abi::kSample, kNoTime});
    return;
  }
  const SampleLayout& l = state_.layout(attr);
  const uint64_t st = l.sample_type;
  ByteCursor c(r.bytes, "sample");
  c.skip(abi::kEventHeaderSize);

  SampleRecord& s = out.emplace<SampleRecord>();
  s.attr_index = attr;
  s.cpumode = static_cast<CpuMode>(r.misc & abi::kMiscCpumodeMask);
  s.exact_ip = r.misc & abi::kMiscExactIp;
  if (st & abi::kSampleIdentifier) s.id = c.u64();
  if (st & abi::kSampleIp) s.ip = c.u64();
  if (st & abi::kSampleTid) {
    s.pid = c.u32();
    s.tid = c.u32();
  }
  if (st & abi::kSampleTime) s.time = c.u64();
  if (st & abi::kSampleAddr) s.addr = c.u64();
  if (st & abi::kSampleId) s.id = c.u64();
  if (st & abi::kSampleStreamId) c.skip(8);
  if (st & abi::kSampleCpu) {
    s.cpu = c.u32();
    c.skip(4);
  }
  if (st & abi::kSamplePeriod) s.period = c.u64();
  if (st & abi::kSampleRead) skip_read_values(c, l.read_format);
  if (st & abi::kSampleCallchain) c.skip_array(c.u64(), 8);
  if (st & abi::kSampleRaw) c.skip(c.u32());
  if (st & abi::kSampleBranchStack) {
    const uint64_t nr = c.u64();
    s.has_branch_stack = true;
    if (l.branch_sample_type & abi::kBranchHwIndex) {
      s.has_hw_idx = true;
      s.hw_idx = c.u64();
    }
    const uint8_t* first = c.here();
    c.skip_array(nr, sizeof(BranchEntry));
    const auto n = static_cast<size_t>(nr);
    if (n == 0) {
      // No entries: nothing to copy. The scratch may not be allocated yet, and memcpy with a
      // null pointer is undefined even for 0 bytes.
      s.branches = {};
    } else if (reinterpret_cast<uintptr_t>(first) % alignof(BranchEntry) == 0) {
      s.branches = {reinterpret_cast<const BranchEntry*>(first), n};
    } else {
      if (aligned_branches_.size() < n) aligned_branches_.resize(n);
      std::memcpy(aligned_branches_.data(), first, n * sizeof(BranchEntry));
      s.branches = {aligned_branches_.data(), n};
    }
    if (l.branch_sample_type & abi::kBranchCounters) c.skip_array(nr, 8);
  }
  if (st & abi::kSampleRegsUser) skip_regs(c, l.regs_user_words);
  if (st & abi::kSampleStackUser) {
    uint64_t size = c.u64();
    if (size != 0) {
      c.skip(size);
      c.skip(8);  // dyn_size
    }
  }
  if (st & (abi::kSampleWeight | abi::kSampleWeightStruct)) c.skip(8);
  if (st & abi::kSampleDataSrc) c.skip(8);
  if (st & abi::kSampleTransaction) c.skip(8);
  if (st & abi::kSampleRegsIntr) skip_regs(c, l.regs_intr_words);
  if (st & abi::kSamplePhysAddr) c.skip(8);
  if (st & abi::kSampleCgroup) c.skip(8);
  if (st & abi::kSampleDataPageSize) c.skip(8);
  if (st & abi::kSampleCodePageSize) c.skip(8);
  if (st & abi::kSampleAux) c.skip(c.u64());
}

void RecordDecoder::decode(const RawRecord& r, Record& out) {
  if (r.type == abi::kSample) return decode_sample(r, out);

  const uint32_t attr = state_.attr_of_non_sample(r.bytes);
  Trailer t;
  size_t body_end = r.bytes.size();
  if (attr != PerfSessionState::kUnknownAttr)
    body_end = read_trailer(r.bytes, state_.layout(attr), t);
  ByteCursor c(r.bytes.first(body_end), "record");
  c.skip(abi::kEventHeaderSize);
  const auto cpumode = static_cast<CpuMode>(r.misc & abi::kMiscCpumodeMask);

  switch (r.type) {
    case abi::kMmap:
    case abi::kMmap2: {
      MmapRecord& m = out.emplace<MmapRecord>();
      m.time = t.time;
      m.cpumode = cpumode;
      m.is_mmap2 = r.type == abi::kMmap2;
      m.executable = !(r.misc & abi::kMiscMmapData);
      m.pid = c.u32();
      m.tid = c.u32();
      m.start = c.u64();
      m.len = c.u64();
      m.pgoff = c.u64();
      if (m.is_mmap2) {
        // The 24 bytes are either {maj, min, ino, ino_generation} or {build_id_size, 3
        // reserved, build_id[20]}, told apart by PERF_RECORD_MISC_MMAP_BUILD_ID alone. The
        // kernel sets that bit in a record it shares among every event watching the mapping
        // and never clears it: once one event asks for build-ids (attr.build_id), an event
        // that does not, output after it, gets the bit over a device/inode body (seen on 6.18,
        // a perf record beside a build-id-taking profiler). A real build-id body has a size of
        // 1 to 20, zero reserved bytes and zeros after the id; anything else is read as the
        // device/inode it is, and the file is then matched by name.
        const std::span<const uint8_t> body = c.bytes(24);
        const size_t id_size = body[0];
        const bool build_id_body =
            (r.misc & abi::kMiscMmapBuildId) && id_size >= 1 && id_size <= BuildId::kMaxSize &&
            body[1] == 0 && body[2] == 0 && body[3] == 0 &&
            std::all_of(body.begin() + 4 + id_size, body.end(), [](uint8_t b) { return b == 0; });
        if (build_id_body) {
          m.build_id = BuildId(body.subspan(4, id_size));
        } else {
          ByteCursor ids(body, "record");
          m.maj = ids.u32();
          m.min = ids.u32();
          m.ino = ids.u64();
          m.ino_generation = ids.u64();
          m.build_id_flag_ignored = (r.misc & abi::kMiscMmapBuildId) != 0;
        }
        m.prot = c.u32();
        m.flags = c.u32();
      }
      m.filename = bounded_string(c.bytes(c.remaining()));
      return;
    }
    case abi::kComm: {
      CommRecord& m = out.emplace<CommRecord>();
      m.time = t.time;
      m.exec = r.misc & abi::kMiscCommExec;
      m.pid = c.u32();
      m.tid = c.u32();
      m.comm = bounded_string(c.bytes(c.remaining()));
      return;
    }
    case abi::kFork:
    case abi::kExit: {
      TaskRecord& m = out.emplace<TaskRecord>();
      m.is_exit = r.type == abi::kExit;
      m.pid = c.u32();
      m.ppid = c.u32();
      m.tid = c.u32();
      m.ptid = c.u32();
      uint64_t body_time = c.u64();
      // The body's own time serves when the attr has no sample_id_all trailer.
      m.time = t.time != kNoTime ? t.time : body_time;
      return;
    }
    case abi::kLost: {
      LostRecord& m = out.emplace<LostRecord>();
      m.time = t.time;
      m.id = c.u64();
      m.lost = c.u64();
      return;
    }
    case abi::kLostSamples: {
      LostRecord& m = out.emplace<LostRecord>();
      m.is_lost_samples = true;
      m.time = t.time;
      m.id = t.id;
      m.lost = c.u64();
      return;
    }
    case abi::kThrottle:
    case abi::kUnthrottle: {
      ThrottleRecord& m = out.emplace<ThrottleRecord>();
      m.unthrottle = r.type == abi::kUnthrottle;
      uint64_t body_time = c.u64();
      m.time = t.time != kNoTime ? t.time : body_time;
      m.id = c.u64();
      m.stream_id = c.u64();
      return;
    }
    case abi::kAux: {
      // struct { header; u64 aux_offset; u64 aux_size; u64 flags; sample_id; }
      AuxRecord& m = out.emplace<AuxRecord>();
      m.time = t.time;
      m.id = t.id;
      m.aux_offset = c.u64();
      m.aux_size = c.u64();
      m.flags = c.u64();
      return;
    }
    default:
      out.emplace<OtherRecord>(OtherRecord{r.type, t.time});
      return;
  }
}

}  // namespace profcollect
