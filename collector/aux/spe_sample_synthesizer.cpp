#include "collector/aux/spe_sample_synthesizer.h"

#include <cstring>
#include <string>

#include "collector/records/byte_cursor.h"
#include "collector/records/perf_abi.h"
#include "collector/aux/spe_packet_decoder.h"

namespace profcollect {

namespace abi = perf_abi;

namespace {

constexpr uint32_t kAuxtraceArmSpe = 4;  // enum auxtrace_type in tools/perf/util/auxtrace.h
constexpr uint32_t kRecordItraceStart = 12;

// The private record: header, pid, tid, time, cpu, flags, pc, target.
constexpr size_t kSampleSize = 8 + 4 + 4 + 8 + 4 + 4 + 8 + 8;
constexpr uint32_t kFlagTaken = 1, kFlagMispredicted = 2, kFlagKernel = 4;

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace

void SpeSampleSynthesizer::observe(const RawRecord& raw) {
  const std::span<const uint8_t> b = raw.bytes;
  switch (raw.type) {
    case abi::kTimeConv:
      // time_shift, time_mult, time_zero; perf 5.13+ adds time_cycles, time_mask and the caps.
      if (b.size() >= 32) {
        time_shift_ = static_cast<uint16_t>(abi::load<uint64_t>(b.data() + 8));
        time_mult_ = static_cast<uint32_t>(abi::load<uint64_t>(b.data() + 16));
        time_zero_ = abi::load<uint64_t>(b.data() + 24);
      }
      if (b.size() >= 56) {
        time_cycles_ = abi::load<uint64_t>(b.data() + 32);
        time_mask_ = abi::load<uint64_t>(b.data() + 40);
        cap_user_time_short_ = b[49] != 0;
      }
      break;
    case abi::kAuxtraceInfo:
      // type, reserved, priv[0] = the SPE PMU type, priv[1] = per-CPU mmaps.
      if (b.size() >= 32 && abi::load<uint32_t>(b.data() + 8) == kAuxtraceArmSpe) {
        pmu_type_ = static_cast<uint32_t>(abi::load<uint64_t>(b.data() + 16));
        state_.info().arm_spe = true;
      }
      break;
    case abi::kComm:
    case kRecordItraceStart:
      if (b.size() >= 16)
        pid_of_tid_[abi::load<uint32_t>(b.data() + 12)] = abi::load<uint32_t>(b.data() + 8);
      break;
    case abi::kFork:
      if (b.size() >= 24)
        pid_of_tid_[abi::load<uint32_t>(b.data() + 16)] = abi::load<uint32_t>(b.data() + 8);
      break;
    default:
      break;
  }
}

// The attr of the SPE event (its type is the AUXTRACE_INFO's PMU type), named after the PMU as
// the file's PMU mappings call it. Mappings that give the type to another PMU make the data
// undecodable: it would be read in a format it is not in.
uint32_t SpeSampleSynthesizer::resolve_attr() {
  if (attr_checked_) return attr_index_;
  attr_checked_ = true;
  SessionInfo& info = state_.info();
  std::string pmu_name;
  if (!info.pmu_mappings.empty()) {
    pmu_known_ = false;
    for (const auto& [type, name] : info.pmu_mappings) {
      if (type == pmu_type_ && name.starts_with("arm_spe")) {
        pmu_known_ = true;
        pmu_name = name;
      }
    }
  }
  if (!pmu_known_) return attr_index_;
  for (uint32_t i = 0; i < info.attrs.size(); ++i) {
    if (info.attrs[i].type != pmu_type_) continue;
    attr_index_ = i;
    if (info.attrs[i].name.starts_with("unknown attr type")) {
      info.attrs[i].name = (pmu_name.empty() ? std::string("arm_spe") : pmu_name) + "//";
    }
    break;
  }
  return attr_index_;
}

// perf's tsc_to_perf_time() (tools/perf/util/tsc.c): time_zero + cycles * mult >> shift,
// computed in two parts so that it does not overflow.
uint64_t SpeSampleSynthesizer::perf_time(uint64_t cycles) const {
  if (time_mult_ == 0) return kNoTime;
  if (cap_user_time_short_) cycles = time_cycles_ + ((cycles - time_cycles_) & time_mask_);
  const uint64_t quot = cycles >> time_shift_;
  const uint64_t rem = cycles & ((uint64_t{1} << time_shift_) - 1);
  return time_zero_ + quot * time_mult_ + ((rem * time_mult_) >> time_shift_);
}

void SpeSampleSynthesizer::use_pmu(uint32_t pmu_type) {
  pmu_type_ = pmu_type;
  attr_checked_ = false;
}

void SpeSampleSynthesizer::set_time_conversion(uint16_t shift, uint32_t mult, uint64_t zero,
                                               bool short_counter, uint64_t cycles, uint64_t mask) {
  time_shift_ = shift;
  time_mult_ = mult;
  time_zero_ = zero;
  cap_user_time_short_ = short_counter;
  time_cycles_ = cycles;
  time_mask_ = mask;
}

void SpeSampleSynthesizer::synthesize(const RawRecord& auxtrace, std::span<const uint8_t> payload,
                                      const std::function<void(const RawRecord&, uint64_t)>& emit) {
  // struct perf_record_auxtrace: size, offset, reference, idx, tid, cpu.
  if (active() && resolve_attr() != UINT32_MAX && auxtrace.bytes.size() < 48)
    throw RecordFormatError("AUXTRACE record shorter than 48 bytes");
  const uint32_t chunk_tid =
      auxtrace.bytes.size() >= 48 ? abi::load<uint32_t>(auxtrace.bytes.data() + 36) : UINT32_MAX;
  const uint32_t cpu =
      auxtrace.bytes.size() >= 48 ? abi::load<uint32_t>(auxtrace.bytes.data() + 40) : UINT32_MAX;
  synthesize_chunk(payload, chunk_tid, cpu, auxtrace, emit);
}

void SpeSampleSynthesizer::synthesize_chunk(
    std::span<const uint8_t> payload, uint32_t chunk_tid, uint32_t cpu, const RawRecord& where,
    const std::function<void(const RawRecord&, uint64_t)>& emit) {
  SpeDecodeTally& tally = state_.info().spe;
  ++tally.chunks;
  if (!active() || resolve_attr() == UINT32_MAX) {
    tally.bytes_undecoded += payload.size();
    return;
  }
  scratch_.resize(kSampleSize);
  uint8_t* p = scratch_.data();
  RawRecord out;
  out.type = kSampleRecordType;
  out.bytes = {p, kSampleSize};
  out.offset = where.offset;
  out.stream = where.stream;

  spe::SpePacketDecoder decoder(payload);
  spe::Record r;
  while (decoder.next(r)) {
    uint32_t tid = r.has_context ? r.context : chunk_tid;
    uint32_t pid = kNoPid;
    if (tid != UINT32_MAX) {
      auto it = pid_of_tid_.find(tid);
      pid = it != pid_of_tid_.end() ? it->second : tid;  // an unseen thread: a process's first
    } else {
      tid = kNoPid;
      ++tally.records_without_thread;
    }
    const uint64_t time = r.has_timestamp ? perf_time(r.timestamp) : kNoTime;
    uint32_t flags = r.exception_level != 0 ? kFlagKernel : 0;
    if (r.taken() && r.has_branch_target) {
      flags |= kFlagTaken;
      ++tally.taken_branches;
    }
    if (r.mispredicted()) flags |= kFlagMispredicted;
    store<uint32_t>(p, kSampleRecordType);
    store<uint16_t>(p + 4, 0);
    store<uint16_t>(p + 6, static_cast<uint16_t>(kSampleSize));
    store<uint32_t>(p + 8, pid);
    store<uint32_t>(p + 12, tid);
    store<uint64_t>(p + 16, time);
    store<uint32_t>(p + 24, cpu);
    store<uint32_t>(p + 28, flags);
    store<uint64_t>(p + 32, r.pc);
    store<uint64_t>(p + 40, r.branch_target);
    emit(out, time);
  }
  const spe::DecodeCounts& c = decoder.counts();
  tally.records += c.records;
  tally.records_without_pc += c.records_without_pc;
  tally.records_dropped += c.records_dropped;
  tally.bytes_skipped += c.bytes_skipped;
  tally.bytes_truncated += c.bytes_truncated;
}

void SpeSampleSynthesizer::decode(const RawRecord& raw, SampleRecord& out,
                                  BranchEntry& branch) const {
  if (raw.bytes.size() < kSampleSize) throw RecordFormatError("short SPE sample");
  const uint8_t* p = raw.bytes.data();
  const uint32_t flags = abi::load<uint32_t>(p + 28);
  out = SampleRecord{};
  out.pid = abi::load<uint32_t>(p + 8);
  out.tid = abi::load<uint32_t>(p + 12);
  out.time = abi::load<uint64_t>(p + 16);
  out.cpu = abi::load<uint32_t>(p + 24);
  out.ip = abi::load<uint64_t>(p + 32);
  out.attr_index = attr_index_;
  out.cpumode = flags & kFlagKernel ? CpuMode::Kernel : CpuMode::User;
  out.exact_ip = true;
  out.has_branch_stack = true;
  if (flags & kFlagTaken) {
    out.addr = abi::load<uint64_t>(p + 40);
    // perf_branch_entry flags: mispred (bit 0) or predicted (bit 1).
    branch = BranchEntry{out.ip, out.addr, flags & kFlagMispredicted ? 1ULL : 2ULL};
    out.branches = {&branch, 1};
  }
}

}  // namespace profcollect
