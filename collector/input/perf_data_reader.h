// Reading perf.data files: the entry point of the perf.data record source.
//
// Supported: file mode (a perf.data whose header holds attrs and features), pipe mode
// (`perf record -o -`, metadata as records), `perf record --threads` directories, zstd
// compressed records (`perf record -z`), and files of a killed perf (data size 0 in the
// header: records are read to the end of the file). Not supported: big-endian files and the
// pre-2.6.38 format (OpenError).
//
// Records come out in perf's time order (see time_orderer.h). Memory does not depend on the
// file's size: the input is read through a fixed buffer, and at most one round of records is
// queued. Records of perf's own metadata types (64 and up) are applied to session(), not
// returned; kernel record types the profiler does not model come out as OtherRecord. In pipe
// mode the source reads up to the first record before it is returned, so session() already
// holds the attrs; build-ids may keep coming until the end.
#pragma once

#include <memory>
#include <string>

#include "collector/records/record_source.h"

namespace profcollect {

// path: a perf.data file, a `perf record --threads` directory (perf.data/data.N files plus the
// header file), or "-" for standard input (pipe mode). Throws OpenError.
std::unique_ptr<RecordSource> open_perf_data(const std::string& path);

}  // namespace profcollect
