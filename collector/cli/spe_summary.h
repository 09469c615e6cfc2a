// What a recording's Arm SPE data came to, for convert's and report's summaries: the decoder's
// counts (records, taken branches, what was dropped or skipped) and the kernel's PERF_RECORD_AUX
// flags (data lost to a full AUX area, gaps, collided samples).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "collector/records/record_source.h"

namespace profcollect {

// "Arm SPE: 2000 records (812 taken branches), 0 dropped, 0 bytes skipped, 0 without a thread;
// 2 AUX records (83456 bytes: 0 truncated, 1 partial, 1 collision)"; empty without SPE data.
std::string spe_summary_line(const SessionInfo& session);
// The same figures; null without SPE data.
nlohmann::ordered_json spe_summary_json(const SessionInfo& session);

}  // namespace profcollect
