// Cuts one perf.data input into raw records: checks each record's size against its header and
// the end of the input, skips the payloads that follow some records outside their size
// (PERF_RECORD_AUXTRACE data, HEADER_TRACING_DATA), and replaces PERF_RECORD_COMPRESSED(2)
// records by the records decompressed from them. Everything else, including perf's own
// metadata records (HEADER_ATTR, FINISHED_ROUND, ...), is passed on undecoded.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collector/records/buffered_input.h"
#include "collector/records/zstd_stream_decoder.h"

namespace profcollect {

struct RawRecord {
  uint32_t type = 0;
  uint16_t misc = 0;
  std::span<const uint8_t> bytes;  // the whole record, its 8-byte header included
  // Byte offset in its file; for a record decompressed from PERF_RECORD_COMPRESSED, the offset
  // of that COMPRESSED record (the only place a user can look at).
  uint64_t offset = 0;
  uint32_t stream = 0;  // index of the input it came from (directories have several)
};

class RawRecordReader {
 public:
  RawRecordReader(BufferedInput input, uint32_t stream);

  // The next record, valid until the next call; false at the end of the input. Throws
  // SourceError (file, offset, reason) for a record that is malformed or cut short.
  bool next(RawRecord& out);

  // AUXTRACE records come out (with their payload left in the input) instead of being skipped:
  // the caller may take the payload with take_auxtrace_payload(), else the next call skips it.
  void keep_auxtrace(bool on) { keep_auxtrace_ = on; }
  // Appends the payload of the AUXTRACE record just returned to `out` (reading it in pieces:
  // it may be larger than the input's buffer). Throws SourceError if the input ends first.
  void take_auxtrace_payload(std::vector<uint8_t>& out);

  uint64_t position() const { return input_.offset(); }  // file offset of the next record
  const std::string& file_name() const { return input_.file().name(); }

 private:
  bool next_decompressed(RawRecord& out);
  void decompress(std::span<const uint8_t> payload, uint64_t record_offset);
  [[noreturn]] void fail(uint64_t offset, const std::string& reason) const;

  BufferedInput input_;
  uint32_t stream_;
  size_t pending_consume_ = 0;  // size of the record last returned from input_
  bool keep_auxtrace_ = false;
  uint64_t pending_payload_ = 0;         // of the AUXTRACE record last returned
  uint64_t pending_payload_offset_ = 0;  // that record's offset
  // Decompressed bytes not yet returned: decompressed_[begin, end).
  std::unique_ptr<ZstdStreamDecoder> zstd_;  // created at the first COMPRESSED record
  std::vector<uint8_t> decompressed_;
  size_t decomp_begin_ = 0, decomp_end_ = 0;
  size_t decomp_pending_ = 0;   // size of the record last returned from decompressed_
  uint64_t decomp_offset_ = 0;  // offset of the COMPRESSED record being drained
};

}  // namespace profcollect
