// The RecordSource of a `perf record --threads` directory: the header file's data section and
// one data.N file per recording thread, put in time order the way perf reads such a directory.
//
// perf writes no FINISHED_ROUND there, and a data.N file is NOT in time order: the kernel stamps
// a record before it reserves its place in the ring buffer, so a sample taken in between (an
// interrupt, or the vCPU preempted) lands first with a later time. perf queues every record and
// sorts them all at the end; so does this source, through one TimeOrderer for all inputs, whose
// memory bound lets the older half out when it is full (as perf's queue does when it is). Inputs
// are read lowest latest time first, so the queue spans about the same time of every input.
// On damage, everything queued before the damaged record is returned first, then the
// SourceError is thrown.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "collector/input/record_intake.h"
#include "collector/records/time_orderer.h"

namespace profcollect {

class MergedRecordSource : public RecordSource {
 public:
  MergedRecordSource(std::unique_ptr<PerfSessionState> state, std::vector<RawRecordReader> readers,
                     uint64_t bytes_total);

  bool next(Record& out) override;
  const SessionInfo& session() const override { return state_->info(); }
  uint64_t bytes_read() const override;
  uint64_t bytes_total() const override { return bytes_total_; }

 private:
  struct Input {
    RecordIntake intake;
    uint64_t latest_time = 0;  // largest time read from this input
    bool done = false;
  };
  // One record of the input read least far (in time) into the orderer. False when every input
  // is done (the orderer then holds everything that is left, ready).
  bool pull();

  std::unique_ptr<PerfSessionState> state_;
  std::vector<Input> inputs_;
  TimeOrderer orderer_;
  RecordDecoder decoder_;
  std::optional<SourceError> error_;
  bool failed_ = false;   // an input was damaged: bytes_read() is what was read
  bool stopped_ = false;  // a queued record could not be decoded: nothing more is returned
  uint64_t bytes_total_;
};

}  // namespace profcollect
