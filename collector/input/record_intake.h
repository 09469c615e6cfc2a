// The common first stage of reading one perf.data input: take its raw records, apply perf's
// metadata records to the session state, and read every kernel record's time for ordering
// (RecordDecoder::peek_time: records are decoded once, when they leave the time order). A record
// too short for its time becomes SourceError(file, offset).
#pragma once

#include <cstdint>

#include "collector/records/raw_record_reader.h"
#include "collector/records/record_decoder.h"
#include "collector/aux/aux_decoder.h"

namespace profcollect {

class RecordIntake {
 public:
  // Auxtrace: an AUXTRACE record of a PMU an AUX decoder reads (aux_decoder.h: Arm SPE), its
  // payload still to be taken with take_auxtrace_payload() and given to aux().
  enum class Step { Record, FinishedRound, End, Auxtrace };

  RecordIntake(RawRecordReader reader, PerfSessionState& state);

  // Reads up to the next kernel record (returned in `raw`, valid until the next call, with its
  // time or kNoTime) or FINISHED_ROUND or the end. Throws SourceError.
  Step next(RawRecord& raw, uint64_t& time);

  void take_auxtrace_payload(std::vector<uint8_t>& out) { reader_.take_auxtrace_payload(out); }
  // The decoder the recording's AUXTRACE_INFO called for; null before (or without) one.
  AuxDecoder* aux() { return active_aux_; }

  uint64_t position() const { return reader_.position(); }
  const std::string& file_name() const { return reader_.file_name(); }

 private:
  RawRecordReader reader_;
  PerfSessionState& state_;
  RecordDecoder decoder_;
  std::vector<std::unique_ptr<AuxDecoder>> aux_decoders_;
  AuxDecoder* active_aux_ = nullptr;
};

// What a decoded record tells the session: an MMAP2 record's build-id joins its build-id table.
void note_decoded_record(PerfSessionState& state, const RawRecord& raw, const Record& record);

}  // namespace profcollect
