// Arm SPE data of a perf.data as samples of the one pipeline. perf record -e arm_spe_N// writes
// PERF_RECORD_TIME_CONV (the SPE timestamp's relation to perf time), PERF_RECORD_AUXTRACE_INFO
// of the Arm SPE kind (type 4; priv[0] = the SPE PMU's type, which the file's PMU mappings name
// arm_spe_N; priv[1] = per-CPU mmaps) and, per drain of the AUX area, a PERF_RECORD_AUXTRACE
// followed by the packets (tools/perf/util/arm-spe.c reads the same).
//
// Each decoded SPE record (spe_packet_decoder.h) becomes one sample, as perf's `--itrace=i1i`
// makes it: the PC as the sample's IP at the record's time, its thread from the record's CONTEXT
// packet (the kernel writes the tid to CONTEXTIDR), else from the AUXTRACE record (per-thread
// mode). A taken branch carries a one-entry branch stack {PC -> target, mispredicted}: one BOLT
// edge, no fall-through, as `perf2bolt --spe` counts it; other records carry an empty stack.
//
// The samples are made as private raw records (kSampleRecordType) that go through the reader's
// time order with the side-band records, and are turned into SampleRecords on the way out.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "collector/aux/aux_decoder.h"
#include "collector/records/perf_session_state.h"
#include "collector/records/raw_record_reader.h"
#include "record/record.h"

namespace profcollect {

// The AUX decoder of Arm SPE (aux_decoder.h).
class SpeSampleSynthesizer final : public AuxDecoder {
 public:
  explicit SpeSampleSynthesizer(PerfSessionState& state) : state_(state) {}

  std::string_view name() const override { return "arm_spe"; }

  // Learns from a raw record what decoding needs: TIME_CONV, AUXTRACE_INFO, and the threads of
  // COMM and FORK records (tid -> pid). Every raw record may be passed.
  void observe(const RawRecord& raw) override;

  // An Arm SPE AUXTRACE_INFO was seen: AUXTRACE payloads are worth reading.
  bool active() const override { return pmu_type_ != 0; }

  // Decodes the payload of one AUXTRACE record and calls emit(record, time) for each sample
  // made. The emitted records are valid only during the call.
  void synthesize(const RawRecord& auxtrace, std::span<const uint8_t> payload,
                  const Emit& emit) override;

  // Live collection (spe_live_reader.h): no AUXTRACE_INFO or TIME_CONV comes, the engine says
  // what they would: the SPE PMU's type, and the conversion of SPE timestamps to perf time the
  // kernel publishes in the control page (time_shift, time_mult, time_zero; cap_user_time_zero).
  void use_pmu(uint32_t pmu_type);
  // `short_counter`: cap_user_time_short, the counter is `mask` wide and counts from `cycles`.
  void set_time_conversion(uint16_t shift, uint32_t mult, uint64_t zero, bool short_counter = false,
                           uint64_t cycles = 0, uint64_t mask = 0);

  // The record -> sample step of synthesize() for one chunk of SPE bytes however it came (an
  // AUXTRACE payload, a PERF_RECORD_AUX range of a live AUX area): `chunk_tid` is the thread
  // of records without a CONTEXT packet (UINT32_MAX: none known; the samples then carry
  // kNoPid and the caller may give them the CPU's current task), `where` the offset and
  // stream the samples carry.
  void synthesize_chunk(std::span<const uint8_t> payload, uint32_t chunk_tid, uint32_t cpu,
                        const RawRecord& where,
                        const std::function<void(const RawRecord&, uint64_t)>& emit);

  // The process of thread `tid` as COMM/FORK records said (the thread itself when none did).
  uint32_t pid_of(uint32_t tid) const {
    auto it = pid_of_tid_.find(tid);
    return it != pid_of_tid_.end() ? it->second : tid;
  }

  // A kSampleRecordType record as a sample; its branch stack points at `branch`.
  void decode(const RawRecord& raw, SampleRecord& out, BranchEntry& branch) const override;

 private:
  uint64_t perf_time(uint64_t timestamp) const;
  uint32_t resolve_attr();

  PerfSessionState& state_;
  uint32_t pmu_type_ = 0;
  uint32_t attr_index_ = UINT32_MAX;  // the attr the samples are counted under
  bool attr_checked_ = false;
  bool pmu_known_ = true;  // the PMU mappings (when present) name the type an SPE PMU
  // TIME_CONV
  uint16_t time_shift_ = 0;
  uint32_t time_mult_ = 0;
  uint64_t time_zero_ = 0;
  uint64_t time_cycles_ = 0, time_mask_ = 0;
  bool cap_user_time_short_ = false;
  std::unordered_map<uint32_t, uint32_t> pid_of_tid_;
  std::vector<uint8_t> scratch_;  // one synthesized record
};

}  // namespace profcollect
