// perf's own metadata records, written in pipe mode instead of a header (and some in file mode
// too): HEADER_ATTR, HEADER_BUILD_ID, HEADER_FEATURE, EVENT_UPDATE, ID_INDEX. They update the
// session state and are not yielded as records.
#pragma once

#include "collector/records/perf_session_state.h"
#include "collector/records/raw_record_reader.h"

namespace profcollect {

// True if `r` is a metadata record (applied to `state`, or knowingly ignored: HEADER_EVENT_TYPE,
// FINISHED_INIT, THREAD_MAP, CPU_MAP, STAT*, TIME_CONV, AUXTRACE_INFO/ERROR); false for a
// record the kernel wrote or FINISHED_ROUND. Throws RecordFormatError for a malformed one.
bool apply_header_record(const RawRecord& r, PerfSessionState& state);

}  // namespace profcollect
