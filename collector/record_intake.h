// The common first stage of reading one perf.data input: take its raw records, apply perf's
// metadata records to the session state, and read every kernel record's time for ordering
// (RecordDecoder::peek_time: records are decoded once, when they leave the time order). A record
// too short for its time becomes SourceError(file, offset).
#pragma once

#include <cstdint>

#include "collector/raw_record_reader.h"
#include "collector/record_decoder.h"
#include "collector/spe_sample_synthesizer.h"

namespace profcollect {

class RecordIntake {
 public:
  // Auxtrace: an AUXTRACE record of Arm SPE data (spe_sample_synthesizer.h), its payload still
  // to be taken with take_auxtrace_payload().
  enum class Step { Record, FinishedRound, End, Auxtrace };

  RecordIntake(RawRecordReader reader, PerfSessionState& state);

  // Reads up to the next kernel record (returned in `raw`, valid until the next call, with its
  // time or kNoTime) or FINISHED_ROUND or the end. Throws SourceError.
  Step next(RawRecord& raw, uint64_t& time);

  void take_auxtrace_payload(std::vector<uint8_t>& out) { reader_.take_auxtrace_payload(out); }
  SpeSampleSynthesizer& spe() { return spe_; }

  uint64_t position() const { return reader_.position(); }
  const std::string& file_name() const { return reader_.file_name(); }

 private:
  RawRecordReader reader_;
  PerfSessionState& state_;
  RecordDecoder decoder_;
  SpeSampleSynthesizer spe_;
};

// What a decoded record tells the session: an MMAP2 record's build-id joins its build-id table.
void note_decoded_record(PerfSessionState& state, const RawRecord& raw, const Record& record);

}  // namespace profcollect
