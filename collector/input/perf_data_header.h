// The start of a perf.data: the magic and header size decide between file mode (a 104-byte
// header pointing at the attr, data and feature sections) and pipe mode (a 16-byte header,
// everything else as records). For file mode this reads the attrs with their ids and the
// feature sections into the session state before the first record.
#pragma once

#include <cstdint>

#include "collector/records/buffered_input.h"
#include "collector/records/perf_session_state.h"

namespace profcollect {

enum class PerfDataMode { File, Pipe };

// Checks the first 16 bytes (magic and header size). Throws OpenError for anything that is not
// a little-endian perf.data of format version 2.
PerfDataMode perf_data_mode(const uint8_t* first16, const std::string& name);

struct DataSection {
  uint64_t begin = 0;
  uint64_t end = BufferedInput::kToEnd;  // exclusive; kToEnd when the header says size 0
};

// Reads a file-mode header from a seekable file: attrs, ids, and (when the data size is known)
// the feature sections. Throws OpenError when the header or attr section is unreadable.
DataSection read_file_header(const InputFile& file, PerfSessionState& state);

}  // namespace profcollect
