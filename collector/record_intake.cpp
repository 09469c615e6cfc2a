#include "collector/record_intake.h"

#include "collector/byte_cursor.h"
#include "collector/header_records.h"
#include "collector/perf_abi.h"
#include "collector/record_source.h"

namespace profcollect {

RecordIntake::RecordIntake(RawRecordReader reader, PerfSessionState& state)
    : reader_(std::move(reader)), state_(state), decoder_(state) {}

RecordIntake::Step RecordIntake::next(RawRecord& raw, uint64_t& time) {
  for (;;) {
    if (!reader_.next(raw)) return Step::End;
    try {
      if (raw.type == perf_abi::kFinishedRound) return Step::FinishedRound;
      if (apply_header_record(raw, state_)) continue;
      decoder_.decode(raw, scratch_);
    } catch (const RecordFormatError& e) {
      throw SourceError(reader_.file_name(), raw.offset, e.what());
    }
    if (const auto* m = std::get_if<MmapRecord>(&scratch_); m && !m->build_id.empty())
      state_.add_build_id(BuildIdEntry{m->pid, raw.misc, m->build_id, std::string(m->filename)});
    time = RecordDecoder::time_of(scratch_);
    return Step::Record;
  }
}

}  // namespace profcollect
