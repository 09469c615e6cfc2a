// What one pass over a collection's ring buffers read, copied out of them: the raw records of
// every buffer in the order they were read, and the AUX bytes each PERF_RECORD_AUX announced
// (Arm SPE). The drain thread fills a batch (ring_buffer_drain.h) and gives the buffers' space
// back to the kernel at once; the session's thread later puts the batch's records in time order
// and decodes them (LiveRecordSource::ingest). A batch is reused: clear() keeps its capacity.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace profcollect {

// How many records and samples a reader left out, and why (counted where they were dropped).
struct DropCounts {
  uint64_t samples = 0;    // PERF_RECORD_SAMPLE records left out: the backlog was full
  uint64_t records = 0;    // other records left out: the backlog was full past its reserve
  uint64_t aux_bytes = 0;  // AUX bytes left out with their PERF_RECORD_AUX
};

// The reader's running totals, carried by every batch so that the session's counters follow
// the drain thread's without sharing memory with it.
struct ReaderTotals {
  uint64_t passes = 0;
  uint64_t skipped_bytes = 0;    // unreadable buffer contents (a corrupt header), skipped
  uint64_t corrupt_heads = 0;    // passes whose data_head was impossible
  uint64_t aux_truncations = 0;  // PERF_RECORD_AUX records flagged TRUNCATED, as read
  DropCounts dropped;
};

struct RecordBatch {
  enum class Kind : uint8_t {
    Record,      // a whole record, its header included
    AuxBytes,    // the bytes the PERF_RECORD_AUX just before announced, joined if they wrapped
    AuxInvalid,  // that record announced bytes outside the AUX area's unread part: none copied
    AuxDropped,  // that record's bytes did not fit the backlog: given back uncopied (counted)
  };
  struct Piece {
    uint64_t offset = 0;  // into bytes
    uint32_t size = 0;
    uint32_t stream = 0;  // the buffer's index
    Kind kind = Kind::Record;
    bool wrapped = false;      // AuxBytes: the range wrapped around the end of the area
    uint64_t unannounced = 0;  // AuxBytes: bytes before it that no record announced
  };

  std::vector<uint8_t> bytes;
  std::vector<Piece> pieces;
  // New events' ids (a CPU that came online) by attr index, to be known before these records.
  std::vector<std::pair<uint32_t, uint64_t>> new_ids;
  ReaderTotals totals;  // the reader's, at the end of this pass

  std::span<const uint8_t> piece_bytes(const Piece& p) const {
    return {bytes.data() + p.offset, p.size};
  }
  size_t memory_bytes() const { return bytes.size() + pieces.size() * sizeof(Piece); }
  // What the batch keeps allocated once cleared.
  size_t capacity_bytes() const { return bytes.capacity() + pieces.capacity() * sizeof(Piece); }
  bool empty() const { return pieces.empty() && new_ids.empty(); }
  void clear() {
    bytes.clear();
    pieces.clear();
    new_ids.clear();
  }
  // Appends a piece of `kind` made of `first` and then `second` (a range that wraps).
  Piece& append(Kind kind, uint32_t stream, std::span<const uint8_t> first,
                std::span<const uint8_t> second = {}) {
    Piece p;
    p.offset = bytes.size();
    p.size = static_cast<uint32_t>(first.size() + second.size());
    p.stream = stream;
    p.kind = kind;
    bytes.insert(bytes.end(), first.begin(), first.end());
    bytes.insert(bytes.end(), second.begin(), second.end());
    pieces.push_back(p);
    return pieces.back();
  }
};

}  // namespace profcollect
