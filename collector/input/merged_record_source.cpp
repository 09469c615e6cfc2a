#include "collector/input/merged_record_source.h"

#include "collector/records/byte_cursor.h"

namespace profcollect {

MergedRecordSource::MergedRecordSource(std::unique_ptr<PerfSessionState> state,
                                       std::vector<RawRecordReader> readers, uint64_t bytes_total)
    : state_(std::move(state)), decoder_(*state_), bytes_total_(bytes_total) {
  inputs_.reserve(readers.size());
  for (auto& r : readers) inputs_.push_back(Input{RecordIntake(std::move(r), *state_), {}});
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

void MergedRecordSource::advance(Input& in) {
  in.has_head = false;
  for (;;) {
    uint64_t time = kNoTime;
    switch (in.intake.next(in.head, time)) {
      case RecordIntake::Step::FinishedRound:
        continue;  // not written in directory mode; harmless if present
      case RecordIntake::Step::Auxtrace:
        continue;  // Arm SPE data of a --threads recording: not decoded (its payload is skipped)
      case RecordIntake::Step::End:
        in.done = true;
        return;
      case RecordIntake::Step::Record:
        if (time != 0 && time != kNoTime && time > in.latest_time) in.latest_time = time;
        in.head_time = (time == 0 || time == kNoTime) ? in.latest_time : time;
        in.has_head = true;
        return;
    }
  }
}

bool MergedRecordSource::next(Record& out) {
  if (failed_) return false;
  try {
    if (!started_) {
      started_ = true;
      for (Input& in : inputs_) advance(in);
    } else if (last_) {
      advance(*last_);
    }
  } catch (const SourceError&) {
    failed_ = true;
    throw;
  }
  last_ = nullptr;
  for (Input& in : inputs_)  // ties go to the earlier input: the header file first
    if (in.has_head && (!last_ || in.head_time < last_->head_time)) last_ = &in;
  if (!last_) return false;
  try {
    decoder_.decode(last_->head, out);
  } catch (const RecordFormatError& e) {
    failed_ = true;
    throw SourceError(last_->intake.file_name(), last_->head.offset, e.what());
  }
  note_decoded_record(*state_, last_->head, out);
  return true;
}

}  // namespace profcollect
