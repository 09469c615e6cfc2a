// The feature sections of a perf.data header (HEADER_BUILD_ID, HOSTNAME, OSRELEASE, VERSION,
// ARCH, CMDLINE, EVENT_DESC), in the same format whether they come from the file's feature area
// or, in pipe mode, from PERF_RECORD_HEADER_FEATURE records. Other features are not needed.
#pragma once

#include <cstdint>
#include <span>

#include "collector/records/perf_session_state.h"

namespace profcollect {

// Applies one feature section to `state`. A damaged section is dropped (what it yielded before
// the damage is kept): features describe the recording, the records stay readable without them.
void apply_feature(unsigned feature, std::span<const uint8_t> bytes, PerfSessionState& state);

// One build-id record (a HEADER_BUILD_ID record, or an entry of the build-id section).
// Throws RecordFormatError if it is too short.
BuildIdEntry parse_build_id_record(std::span<const uint8_t> record);

}  // namespace profcollect
