// The RecordSource of a `perf record --threads` directory: the header file's data section and
// one data.N file per recording thread. perf writes no FINISHED_ROUND there because each data.N
// holds ring buffers the kernel already sorted, so the inputs are merged by time, holding one
// record per input. Records without a time sort as if stamped with their input's latest time.
#pragma once

#include <memory>
#include <vector>

#include "collector/input/record_intake.h"

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
    RawRecord head;
    uint64_t head_time = 0;    // ordering time of head
    uint64_t latest_time = 0;  // largest time read from this input
    bool has_head = false;
    bool done = false;
  };
  void advance(Input& in);

  std::unique_ptr<PerfSessionState> state_;
  std::vector<Input> inputs_;
  RecordDecoder decoder_;
  Input* last_ = nullptr;  // the input whose head was returned last; advanced at the next call
  bool started_ = false;
  bool failed_ = false;
  uint64_t bytes_total_;
};

}  // namespace profcollect
