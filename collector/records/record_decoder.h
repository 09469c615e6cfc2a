// Turns one raw kernel record into a typed Record, using the layout of its attr: every
// sample_type field perf can write is stepped over correctly, the ones the profiler uses are
// kept. Non-sample records take their time (and sample id) from the sample_id_all trailer.
//
// The Record's strings and branch spans point into the raw record's bytes (or into this
// decoder's scratch when the branch entries are not 8-aligned), so they are valid as long as
// both are. Decoding allocates nothing once the scratch has grown to the largest branch stack.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/records/perf_session_state.h"
#include "collector/records/raw_record_reader.h"
#include "record/record.h"

namespace profcollect {

class RecordDecoder {
 public:
  explicit RecordDecoder(const PerfSessionState& state) : state_(state) {}

  // Decodes `r` (a type below 64) into `out`. A sample whose id names no attr becomes an
  // OtherRecord of type PERF_RECORD_SAMPLE without a time, as perf drops it too. Throws
  // RecordFormatError when the record is shorter than its attr says.
  void decode(const RawRecord& r, Record& out);

  // The time of a decoded record, kNoTime when it has none.
  static uint64_t time_of(const Record& r);

  // The time of a raw record, read straight from where its attr puts it (kNoTime when it has
  // none), without decoding the rest: what time ordering needs, so that each record is decoded
  // only once, when it comes out in order. Equals time_of(decode(r)). Throws RecordFormatError
  // when the record is too short to hold its time.
  uint64_t peek_time(const RawRecord& r) const;

 private:
  void decode_sample(const RawRecord& r, Record& out);

  const PerfSessionState& state_;
  std::vector<BranchEntry> aligned_branches_;
};

}  // namespace profcollect
