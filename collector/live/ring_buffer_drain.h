// The reading half of a live record source: one pass over a collection's ring buffers copies
// their records into a RecordBatch and gives the space back to the kernel at once. It decodes
// nothing (a record's type is all it looks at), so the drain thread that runs it
// (collector/pipeline/drain_thread.h) is never held up by the session's work; LiveRecordSource::ingest()
// is the other half, on the session's thread.
//
// The AUX bytes each PERF_RECORD_AUX announces (Arm SPE) are copied right after it, joined when
// they wrap, and the AUX area is given back at the end of the buffer's pass (its aux_tail,
// after every read of those bytes). How the kernel announces them, and why a record's bytes may
// be read before aux_head says so: ring_buffer.h (AuxBuffer::announced).
//
// What does not fit the pass's budget is left out and counted (ReaderTotals::dropped): samples
// and AUX bytes first, the other records (side-band: MMAP2, COMM, FORK, ...) only once their
// reserve is spent too. The kernel's buffers are emptied either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "collector/live/record_batch.h"
#include "collector/live/ring_buffer.h"

namespace profcollect {

class RingBufferDrain {
 public:
  // What one pass may add to a batch, in bytes.
  struct Budget {
    size_t samples = std::numeric_limits<size_t>::max();  // samples and AUX bytes
    size_t records = std::numeric_limits<size_t>::max();  // everything (side-band included)
  };

  // Reads `rings` (not owned), whose AUX areas, by the same index, are `aux` (null, or none at
  // all, where there is none).
  explicit RingBufferDrain(std::vector<RingBuffer*> rings, std::vector<AuxBuffer*> aux = {});

  // A buffer added later (a CPU that came online); its index is the next one.
  void add_buffer(RingBuffer* ring, AuxBuffer* aux = nullptr);
  size_t buffer_count() const { return buffers_.size(); }
  // Buffer `index` is read no more (its CPU went offline; it is about to be unmapped).
  void retire(size_t index) {
    buffers_.at(index).ring = nullptr;
    buffers_.at(index).aux = nullptr;
  }
  // Buffer `index`'s AUX area, read from now on.
  void set_aux(size_t index, AuxBuffer* aux) { buffers_.at(index).aux = aux; }

  // One pass over every buffer, appended to `out`; returns the bytes read from the buffers.
  // out.totals is set to the running totals after the pass.
  uint64_t read_pass(RecordBatch& out, Budget budget);
  uint64_t read_pass(RecordBatch& out) { return read_pass(out, Budget{}); }

  const ReaderTotals& totals() const { return totals_; }

 private:
  struct Buffer {
    RingBuffer* ring = nullptr;
    AuxBuffer* aux = nullptr;
    uint64_t aux_consumed_to = 0;  // end of the last AUX range taken (stream position)
    bool aux_consumed = false;
    uint64_t skipped_bytes = 0, corrupt_heads = 0;  // the ring's, as last read
  };
  // The AUX bytes `record` announced: copied into `out` after it when they fit `room` bytes,
  // else given back uncopied; with `out` null (the record itself was left out), given back only.
  void take_aux(Buffer& b, uint32_t stream, std::span<const uint8_t> record, RecordBatch* out,
                size_t room);

  std::vector<Buffer> buffers_;
  ReaderTotals totals_;
};

}  // namespace profcollect
