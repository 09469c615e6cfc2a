// An AUX-area decoder: turns what a PMU writes into its AUX area into samples of the one
// pipeline, whether the bytes come from a recording (a PERF_RECORD_AUXTRACE's payload, after the
// AUXTRACE_INFO that says which PMU wrote them) or from a live AUX area (collector/live). Arm
// SPE is the first (spe_sample_synthesizer.h); another AUX source (Intel PT, CoreSight, AMD IBS
// through AUX) is one more class and one more line in make_aux_decoders().
//
// Decoded samples are made as private raw records (kSampleRecordType) so that they go through
// the reader's time order with the side-band records; decode() turns one back into a
// SampleRecord on the way out.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "collector/records/perf_session_state.h"
#include "collector/records/raw_record_reader.h"
#include "record/record.h"

namespace profcollect {

class AuxDecoder {
 public:
  // A record type no perf writes (perf's own types end below 128): a decoded AUX sample.
  static constexpr uint32_t kSampleRecordType = 0x5350450;
  using Emit = std::function<void(const RawRecord&, uint64_t time)>;

  virtual ~AuxDecoder() = default;
  virtual std::string_view name() const = 0;  // "arm_spe"

  // Learns from a raw record what decoding needs (AUXTRACE_INFO, TIME_CONV, threads of COMM and
  // FORK). Every raw record of a recording may be passed.
  virtual void observe(const RawRecord& raw) = 0;
  // The recording's AUXTRACE_INFO named this decoder's PMU: AUXTRACE payloads are its to read.
  virtual bool active() const = 0;
  // Decodes one AUXTRACE record's payload, calling emit(record, time) per sample made (each
  // valid during the call). Throws RecordFormatError for a payload it cannot read.
  virtual void synthesize(const RawRecord& auxtrace, std::span<const uint8_t> payload,
                          const Emit& emit) = 0;
  // A kSampleRecordType record as a sample; a branch it carries is written to `branch`, which
  // the sample's branch stack points at.
  virtual void decode(const RawRecord& raw, SampleRecord& out, BranchEntry& branch) const = 0;
};

// One of each decoder, for a recording whose AUXTRACE_INFO says which one reads it.
std::vector<std::unique_ptr<AuxDecoder>> make_aux_decoders(PerfSessionState& state);

}  // namespace profcollect
