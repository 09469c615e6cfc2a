#include "collector/input/merged_record_source.h"

#include "collector/records/byte_cursor.h"

namespace profcollect {

MergedRecordSource::MergedRecordSource(std::unique_ptr<PerfSessionState> state,
                                       std::vector<RawRecordReader> readers, uint64_t bytes_total)
    : state_(std::move(state)), decoder_(*state_), bytes_total_(bytes_total) {
  inputs_.reserve(readers.size());
  for (auto& r : readers) inputs_.push_back(Input{RecordIntake(std::move(r), *state_)});
}

uint64_t MergedRecordSource::bytes_read() const {
  uint64_t sum = 0;
  bool all_done = true;
  for (const Input& in : inputs_) {
    sum += in.intake.position();
    all_done &= in.done;
  }
  return all_done && !failed_ && bytes_total_ ? bytes_total_ : sum;
}

bool MergedRecordSource::pull() {
  Input* least = nullptr;  // ties go to the earlier input: the header file first
  for (Input& in : inputs_)
    if (!in.done && (!least || in.latest_time < least->latest_time)) least = &in;
  if (!least) return false;
  RawRecord raw;
  try {
    for (;;) {
      uint64_t time = kNoTime;
      switch (least->intake.next(raw, time)) {
        case RecordIntake::Step::FinishedRound:
          continue;  // not written in directory mode; harmless if present
        case RecordIntake::Step::Auxtrace:
          continue;  // Arm SPE data of a --threads recording: not decoded (its payload skipped)
        case RecordIntake::Step::End:
          least->done = true;
          break;
        case RecordIntake::Step::Record:
          if (time != 0 && time != kNoTime && time > least->latest_time) least->latest_time = time;
          orderer_.push(raw, time);
          break;
      }
      break;
    }
  } catch (const SourceError& e) {
    // Let out what came before the damage, then report it.
    error_ = e;
    failed_ = true;
    for (Input& in : inputs_) in.done = true;
  }
  for (const Input& in : inputs_)
    if (!in.done) return true;
  orderer_.finish_all();
  return false;
}

bool MergedRecordSource::next(Record& out) {
  if (stopped_) return false;
  RawRecord raw;
  for (;;) {
    if (orderer_.pop(raw)) {
      try {
        decoder_.decode(raw, out);
      } catch (const RecordFormatError& e) {
        failed_ = stopped_ = true;
        throw SourceError(inputs_[raw.stream].intake.file_name(), raw.offset, e.what());
      }
      note_decoded_record(*state_, raw, out);
      return true;
    }
    if (!pull() && orderer_.queued() == 0) {
      if (error_) {
        SourceError e = *error_;
        error_.reset();
        throw e;
      }
      return false;
    }
  }
}

}  // namespace profcollect
