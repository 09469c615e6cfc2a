#include "collector/record_intake.h"

#include "collector/byte_cursor.h"
#include "collector/header_records.h"
#include "collector/perf_abi.h"
#include "collector/record_source.h"

namespace profcollect {

RecordIntake::RecordIntake(RawRecordReader reader, PerfSessionState& state)
    : reader_(std::move(reader)), state_(state), decoder_(state), spe_(state) {
  reader_.keep_auxtrace(true);
}

RecordIntake::Step RecordIntake::next(RawRecord& raw, uint64_t& time) {
  for (;;) {
    if (!reader_.next(raw)) return Step::End;
    try {
      if (raw.type == perf_abi::kFinishedRound) return Step::FinishedRound;
      spe_.observe(raw);
      if (raw.type == perf_abi::kAuxtrace) {
        if (spe_.active()) return Step::Auxtrace;
        continue;  // its payload is skipped
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
