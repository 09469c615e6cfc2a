// Arm SPE data of a live collection: the AUX areas of the SPE events (one per CPU buffer, mapped
// beside the data area: ring_buffer.h) read by the PERF_RECORD_AUX records the kernel writes
// into the data areas, and turned into samples by the same record -> sample step as a perf.data's
// AUXTRACE payloads (SpeSampleSynthesizer::synthesize_chunk): one pipeline for both.
//
// How the kernel and perf do it (kernel/events/ring_buffer.c perf_aux_output_end, tools/perf/
// util/arm-spe.c): the SPE driver fills the AUX area from aux_head; when it stops (watermark,
// buffer full, the event scheduled out) the kernel writes PERF_RECORD_AUX {aux_offset, aux_size,
// flags} into the data area, then publishes aux_head. Flags: TRUNCATED (the area was full, the
// event stopped), PARTIAL (the hardware left a gap), COLLISION (SPE samples collided); they are
// counted. The drain thread copies each PERF_RECORD_AUX's bytes out of the AUX area right
// after the record and gives the area back at the end of its pass (ring_buffer_drain.h); this
// reader, on the session's thread, gets the copy:
//   consume()   for each PERF_RECORD_AUX in time-order intake: the copied bytes decoded into
//               samples with their SPE timestamps converted to perf time by the control page's
//               time_zero/time_mult/time_shift (what perf writes as TIME_CONV)
// A sample's thread is the record's CONTEXT packet (the kernel writes the pid to CONTEXTIDR when
// it may), else the CPU's current task as the context-switch side-band says when the sample
// leaves the time order (observe(): PERF_RECORD_SWITCH_CPU_WIDE of a system-wide collection,
// PERF_RECORD_SWITCH of per-thread events), as perf does for per-CPU SPE data; else none.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "collector/records/perf_session_state.h"
#include "collector/records/raw_record_reader.h"
#include "collector/live/ring_buffer.h"
#include "collector/aux/spe_sample_synthesizer.h"
#include "record/record.h"

namespace profcollect {

struct SpeLiveCounters {
  uint64_t truncated = 0;  // TRUNCATED records read (at drain time: the kernel stopped the event)
  uint64_t ranges = 0;     // PERF_RECORD_AUX ranges decoded
  uint64_t bytes = 0;      //   their bytes
  uint64_t wrapped_ranges = 0;         //   of them, wrapping around the end of the AUX area
  uint64_t invalid_ranges = 0;         // announced bytes outside the area's unread part: skipped
  uint64_t dropped_ranges = 0;         // ranges not copied: the drain backlog was full
  uint64_t bytes_unannounced = 0;      // bytes between two records no record announced (lost)
  uint64_t threads_from_context = 0;   // samples whose thread came from a CONTEXT packet
  uint64_t threads_from_switches = 0;  //   from the context-switch side-band
  uint64_t threads_unknown = 0;        //   from neither
};

class SpeLiveReader {
 public:
  // One buffer's AUX area and the CPU whose records it holds (RawRecord::stream = its index).
  struct Area {
    AuxBuffer* aux = nullptr;  // not owned
    uint32_t cpu = 0;
  };
  using Emit = std::function<void(const RawRecord&, uint64_t)>;
  // What the drain thread took of a PERF_RECORD_AUX's bytes.
  struct AuxCopy {
    enum class State { Copied, Invalid, Dropped } state = State::Copied;
    std::span<const uint8_t> bytes;  // Copied: the announced bytes, joined if they wrapped
    bool wrapped = false;            // they wrapped around the end of the area
    uint64_t unannounced = 0;        // bytes before them that no record announced
  };

  // `state` holds the SPE attr (type `pmu_type`); areas by buffer index.
  SpeLiveReader(PerfSessionState& state, uint32_t pmu_type, std::vector<Area> areas);

  // A PERF_RECORD_AUX `record` (decoded from `raw`) read from buffer `stream`, and what was
  // copied of its bytes: they become samples, given to emit(sample, time) (valid during the
  // call only).
  void consume(uint32_t stream, const RawRecord& raw, const AuxRecord& record, const AuxCopy& copy,
               const Emit& emit);

  // Every record leaving the time order: COMM/FORK (a thread's process), context switches.
  void observe(const RawRecord& raw);
  // A synthesized sample leaving the time order, with its thread.
  bool is_sample(const RawRecord& raw) const {
    return raw.type == SpeSampleSynthesizer::kSampleRecordType;
  }
  void decode(const RawRecord& raw, SampleRecord& out);

  const SpeLiveCounters& counters() const { return counters_; }

 private:
  struct AreaState {
    Area area;
    uint32_t current_pid = UINT32_MAX, current_tid = UINT32_MAX;  // from the side-band
  };
  void load_time_conversion(const perf_event_mmap_page& control);

  PerfSessionState& state_;
  SpeSampleSynthesizer synthesizer_;
  std::vector<AreaState> areas_;
  BranchEntry branch_;  // the branch stack of the sample decode() returned
  bool have_time_conversion_ = false;
  SpeLiveCounters counters_;
};

}  // namespace profcollect
