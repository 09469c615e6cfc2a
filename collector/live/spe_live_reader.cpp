#include "collector/live/spe_live_reader.h"

#include <linux/perf_event.h>

#include "collector/records/perf_abi.h"

namespace profcollect {

namespace abi = perf_abi;

SpeLiveReader::SpeLiveReader(PerfSessionState& state, uint32_t pmu_type, std::vector<Area> areas)
    : state_(state), synthesizer_(state) {
  synthesizer_.use_pmu(pmu_type);
  state_.info().arm_spe = true;
  for (const Area& a : areas) {
    AreaState s;
    s.area = a;
    areas_.push_back(s);
  }
}

// The kernel's conversion of the architected counter (what SPE timestamps count) to perf time,
// read under the control page's seqlock (perf's perf_read_tsc_conversion). Without
// cap_user_time_zero there is none: the samples then take the time of their neighbours.
void SpeLiveReader::load_time_conversion(const perf_event_mmap_page& control) {
  const auto* pc = &control;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const uint32_t seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
    const bool zero = pc->cap_user_time_zero;
    const bool short_counter = pc->cap_user_time_short;
    const uint16_t shift = pc->time_shift;
    const uint32_t mult = pc->time_mult;
    const uint64_t time_zero = pc->time_zero, cycles = pc->time_cycles, mask = pc->time_mask;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq || (seq & 1)) continue;
    if (zero) synthesizer_.set_time_conversion(shift, mult, time_zero, short_counter, cycles, mask);
    have_time_conversion_ = true;
    return;
  }
}

void SpeLiveReader::consume(uint32_t stream, const RawRecord& raw, const AuxRecord& record,
                            const AuxCopy& copy, const Emit& emit) {
  if (record.truncated()) ++counters_.truncated;
  if (stream >= areas_.size() || !areas_[stream].area.aux) return;
  AreaState& s = areas_[stream];
  if (!have_time_conversion_) load_time_conversion(s.area.aux->control());
  if (copy.state == AuxCopy::State::Invalid) {
    ++counters_.invalid_ranges;  // behind what was consumed, or past the area: not the kernel's
    return;
  }
  if (copy.state == AuxCopy::State::Dropped) {
    ++counters_.dropped_ranges;
    return;
  }
  counters_.bytes_unannounced += copy.unannounced;
  if (copy.wrapped) ++counters_.wrapped_ranges;
  ++counters_.ranges;
  counters_.bytes += record.aux_size;
  synthesizer_.synthesize_chunk(copy.bytes, UINT32_MAX, s.area.cpu, raw, emit);
}

void SpeLiveReader::observe(const RawRecord& raw) {
  synthesizer_.observe(raw);
  if (raw.type != abi::kSwitch && raw.type != abi::kSwitchCpuWide) return;
  if (raw.stream >= areas_.size()) return;
  AreaState& s = areas_[raw.stream];
  const bool out = raw.misc & PERF_RECORD_MISC_SWITCH_OUT;
  if (raw.type == abi::kSwitchCpuWide && out) {
    // Switch-out: next_prev_pid/tid name the task coming in.
    if (raw.bytes.size() < 16) return;
    s.current_pid = abi::load<uint32_t>(raw.bytes.data() + 8);
    s.current_tid = abi::load<uint32_t>(raw.bytes.data() + 12);
    return;
  }
  if (out) {
    // A per-thread event's task leaves the CPU: its SPE event stops with it.
    s.current_pid = s.current_tid = UINT32_MAX;
    return;
  }
  // Switch-in: the sample_id trailer's pid/tid are the task coming in.
  const uint32_t attr = state_.attr_of_non_sample(raw.bytes);
  if (attr == PerfSessionState::kUnknownAttr) return;
  const SampleLayout& l = state_.layout(attr);
  if (!l.sample_id_all || !(l.sample_type & abi::kSampleTid) ||
      raw.bytes.size() < abi::kEventHeaderSize + l.trailer_bytes)
    return;
  const uint8_t* trailer = raw.bytes.data() + raw.bytes.size() - l.trailer_bytes;
  s.current_pid = abi::load<uint32_t>(trailer);
  s.current_tid = abi::load<uint32_t>(trailer + 4);
}

void SpeLiveReader::decode(const RawRecord& raw, SampleRecord& out) {
  synthesizer_.decode(raw, out, branch_);
  if (out.tid != kNoPid) {
    ++counters_.threads_from_context;
    out.pid = synthesizer_.pid_of(out.tid);  // the COMM/FORK records before it in time
  } else if (raw.stream < areas_.size() && areas_[raw.stream].current_tid != UINT32_MAX) {
    ++counters_.threads_from_switches;
    out.pid = areas_[raw.stream].current_pid;
    out.tid = areas_[raw.stream].current_tid;
  } else {
    ++counters_.threads_unknown;
  }
}

}  // namespace profcollect
