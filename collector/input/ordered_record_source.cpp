#include "collector/input/ordered_record_source.h"

#include "collector/records/byte_cursor.h"

namespace profcollect {

OrderedRecordSource::OrderedRecordSource(std::unique_ptr<PerfSessionState> state,
                                         RawRecordReader reader, uint64_t bytes_total)
    : state_(std::move(state)),
      intake_(std::move(reader), *state_),
      decoder_(*state_),
      bytes_total_(bytes_total) {
  // Read up to the first record so that, in pipe mode, session() holds the attrs (and whatever
  // else perf wrote before the first record) when the source is handed out.
  while (orderer_.queued() == 0 && !input_done_) pull();
}

void OrderedRecordSource::pull() {
  RawRecord raw;
  try {
    uint64_t time = kNoTime;
    switch (intake_.next(raw, time)) {
      case RecordIntake::Step::Record:
        orderer_.push(raw, time);
        break;
      case RecordIntake::Step::Auxtrace:
        aux_payload_.clear();
        intake_.take_auxtrace_payload(aux_payload_);
        try {
          intake_.aux()->synthesize(
              raw, aux_payload_, [this](const RawRecord& r, uint64_t t) { orderer_.push(r, t); });
        } catch (const RecordFormatError& e) {
          throw SourceError(intake_.file_name(), raw.offset, e.what());
        }
        break;
      case RecordIntake::Step::FinishedRound:
        orderer_.finish_round();
        break;
      case RecordIntake::Step::End:
        orderer_.finish_all();
        input_done_ = clean_end_ = true;
        break;
    }
  } catch (const SourceError& e) {
    // Let out what came before the damage, then report it.
    error_ = e;
    orderer_.finish_all();
    input_done_ = true;
  }
}

uint64_t OrderedRecordSource::bytes_read() const {
  return clean_end_ && bytes_total_ ? bytes_total_ : intake_.position();
}

bool OrderedRecordSource::next(Record& out) {
  RawRecord raw;
  for (;;) {
    if (orderer_.pop(raw)) {
      if (raw.type == AuxDecoder::kSampleRecordType) {
        SampleRecord sample;
        intake_.aux()->decode(raw, sample, aux_branch_);
        out = sample;
        return true;
      }
      try {
        decoder_.decode(raw, out);
      } catch (const RecordFormatError& e) {
        throw SourceError(intake_.file_name(), raw.offset, e.what());
      }
      note_decoded_record(*state_, raw, out);
      return true;
    }
    if (error_) {
      SourceError e = *error_;
      error_.reset();
      throw e;
    }
    if (input_done_) return false;
    pull();
  }
}

}  // namespace profcollect
