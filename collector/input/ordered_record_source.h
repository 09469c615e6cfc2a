// The RecordSource of a single perf.data input (file or pipe mode): records pass through a
// TimeOrderer and come out in perf's ordered-events order. On damage, everything queued before
// the damaged record is returned first, then the SourceError is thrown.
#pragma once

#include <memory>
#include <optional>

#include "collector/input/record_intake.h"
#include "collector/records/time_orderer.h"

namespace profcollect {

class OrderedRecordSource : public RecordSource {
 public:
  OrderedRecordSource(std::unique_ptr<PerfSessionState> state, RawRecordReader reader,
                      uint64_t bytes_total);

  bool next(Record& out) override;
  const SessionInfo& session() const override { return state_->info(); }
  uint64_t bytes_read() const override;
  uint64_t bytes_total() const override { return bytes_total_; }

 private:
  void pull();  // one step of the input into the orderer

  std::unique_ptr<PerfSessionState> state_;
  RecordIntake intake_;
  TimeOrderer orderer_;
  RecordDecoder decoder_;
  std::vector<uint8_t> aux_payload_;  // the AUXTRACE payload being decoded, reused
  BranchEntry aux_branch_{};          // the branch stack of the AUX sample last returned
  std::optional<SourceError> error_;
  bool input_done_ = false;
  bool clean_end_ = false;
  uint64_t bytes_total_;
};

}  // namespace profcollect
