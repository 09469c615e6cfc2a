#include "collector/cli/spe_summary.h"

namespace profcollect {

std::string spe_summary_line(const SessionInfo& session) {
  if (!session.arm_spe) return "";
  const SpeDecodeTally& s = session.spe;
  const AuxTally& a = session.aux;
  return "Arm SPE: " + std::to_string(s.records) + " records (" + std::to_string(s.taken_branches) +
         " taken branches), " + std::to_string(s.records_dropped) + " dropped, " +
         std::to_string(s.bytes_skipped) + " bytes skipped, " +
         std::to_string(s.records_without_thread) + " without a thread; " +
         std::to_string(a.records) + " AUX records (" + std::to_string(a.bytes) +
         " bytes: " + std::to_string(a.truncated) + " truncated, " + std::to_string(a.partial) +
         " partial, " + std::to_string(a.collisions) + " collision)";
}

nlohmann::ordered_json spe_summary_json(const SessionInfo& session) {
  if (!session.arm_spe) return nullptr;
  const SpeDecodeTally& s = session.spe;
  const AuxTally& a = session.aux;
  return {{"records", s.records},
          {"taken_branches", s.taken_branches},
          {"records_without_pc", s.records_without_pc},
          {"records_dropped", s.records_dropped},
          {"records_without_thread", s.records_without_thread},
          {"bytes_skipped", s.bytes_skipped},
          {"bytes_truncated", s.bytes_truncated},
          {"bytes_undecoded", s.bytes_undecoded},
          {"aux_records", a.records},
          {"aux_bytes", a.bytes},
          {"aux_truncated", a.truncated},
          {"aux_partial", a.partial},
          {"aux_collisions", a.collisions}};
}

}  // namespace profcollect
