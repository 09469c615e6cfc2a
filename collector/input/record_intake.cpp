#include "collector/input/record_intake.h"

#include "collector/records/byte_cursor.h"
#include "collector/input/header_records.h"
#include "collector/records/perf_abi.h"
#include "collector/records/record_source.h"

namespace profcollect {

RecordIntake::RecordIntake(RawRecordReader reader, PerfSessionState& state)
    : reader_(std::move(reader)),
      state_(state),
      decoder_(state),
      aux_decoders_(make_aux_decoders(state)) {
  reader_.keep_auxtrace(true);
}

RecordIntake::Step RecordIntake::next(RawRecord& raw, uint64_t& time) {
  for (;;) {
    if (!reader_.next(raw)) return Step::End;
    try {
      if (raw.type == perf_abi::kFinishedRound) return Step::FinishedRound;
      for (const auto& aux : aux_decoders_) {
        aux->observe(raw);
        if (!active_aux_ && aux->active()) active_aux_ = aux.get();
      }
      if (raw.type == perf_abi::kAuxtrace) {
        if (active_aux_) return Step::Auxtrace;
        continue;  // no decoder reads it: its payload is skipped
      }
      if (apply_header_record(raw, state_)) continue;
      time = decoder_.peek_time(raw);
    } catch (const RecordFormatError& e) {
      throw SourceError(reader_.file_name(), raw.offset, e.what());
    }
    return Step::Record;
  }
}

void note_decoded_record(PerfSessionState& state, const RawRecord& raw, const Record& record) {
  if (const auto* a = std::get_if<AuxRecord>(&record)) {
    AuxTally& t = state.info().aux;
    ++t.records;
    t.bytes += a->aux_size;
    t.truncated += a->truncated();
    t.partial += a->partial();
    t.collisions += a->collision();
    return;
  }
  const auto* m = std::get_if<MmapRecord>(&record);
  if (!m) return;
  if (!m->build_id.empty())
    state.add_build_id(BuildIdEntry{m->pid, raw.misc, m->build_id, std::string(m->filename)});
  if (m->build_id_flag_ignored) ++state.info().mmap2_false_build_id_flags;
}

}  // namespace profcollect
