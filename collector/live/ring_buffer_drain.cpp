#include "collector/live/ring_buffer_drain.h"

#include "collector/records/perf_abi.h"
#include "record/record.h"

namespace profcollect {

namespace abi = perf_abi;

namespace {

// PERF_RECORD_AUX: the header, then aux_offset, aux_size and flags.
constexpr size_t kAuxRecordFields = abi::kEventHeaderSize + 3 * sizeof(uint64_t);

}  // namespace

RingBufferDrain::RingBufferDrain(std::vector<RingBuffer*> rings, std::vector<AuxBuffer*> aux) {
  for (size_t i = 0; i < rings.size(); ++i) add_buffer(rings[i], i < aux.size() ? aux[i] : nullptr);
}

void RingBufferDrain::add_buffer(RingBuffer* ring, AuxBuffer* aux) {
  Buffer b;
  b.ring = ring;
  b.aux = aux;
  buffers_.push_back(b);
}

// The bytes a PERF_RECORD_AUX announced, copied after it (or the reason they are not).
void RingBufferDrain::take_aux(Buffer& b, uint32_t stream, std::span<const uint8_t> record,
                               RecordBatch* out, size_t room) {
  if (record.size() < kAuxRecordFields) return;  // malformed: the session counts it
  const uint64_t offset = abi::load<uint64_t>(record.data() + abi::kEventHeaderSize);
  const uint64_t size = abi::load<uint64_t>(record.data() + abi::kEventHeaderSize + 8);
  const uint64_t flags = abi::load<uint64_t>(record.data() + abi::kEventHeaderSize + 16);
  if (flags & AuxRecord::kTruncated) ++totals_.aux_truncations;
  AuxBuffer& aux = *b.aux;
  const uint64_t start = b.aux_consumed ? b.aux_consumed_to : aux.tail();
  const AuxBuffer::Bytes bytes = aux.announced(offset, size);
  if (bytes.size() != size || offset - start > aux.size()) {
    // Behind what was taken, or past the area: not the kernel's. Nothing to copy or give back.
    if (out) out->append(RecordBatch::Kind::AuxInvalid, stream, {});
    return;
  }
  if (out && size + sizeof(RecordBatch::Piece) <= room) {
    RecordBatch::Piece& p =
        out->append(RecordBatch::Kind::AuxBytes, stream, bytes.first, bytes.second);
    p.wrapped = !bytes.second.empty();
    p.unannounced = offset - start;
  } else {
    if (out) out->append(RecordBatch::Kind::AuxDropped, stream, {});
    totals_.dropped.aux_bytes += size;
  }
  b.aux_consumed_to = offset + size;
  b.aux_consumed = true;
}

uint64_t RingBufferDrain::read_pass(RecordBatch& out, Budget budget) {
  const size_t start_bytes = out.memory_bytes();
  uint64_t read = 0;
  uint64_t skipped = 0, corrupt_heads = 0;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    Buffer& b = buffers_[i];
    if (!b.ring) continue;  // retired
    RingBuffer& rb = *b.ring;
    const auto stream = static_cast<uint32_t>(i);
    rb.begin_pass();
    std::span<const uint8_t> record;
    while (rb.next(record)) {
      read += record.size();
      const uint32_t type = abi::load<uint32_t>(record.data());
      const size_t used =
          out.memory_bytes() - start_bytes + record.size() + sizeof(RecordBatch::Piece);
      const bool sample = type == abi::kSample;
      if (sample && used > budget.samples) {
        ++totals_.dropped.samples;
        continue;
      }
      if (used > budget.records) {
        if (sample) {
          ++totals_.dropped.samples;
        } else {
          ++totals_.dropped.records;
        }
        // An AUX record's area is given back all the same.
        if (type == abi::kAux && b.aux) take_aux(b, stream, record, nullptr, 0);
        continue;
      }
      out.append(RecordBatch::Kind::Record, stream, record);
      if (type == abi::kAux && b.aux) {
        const size_t aux_used = out.memory_bytes() - start_bytes;
        take_aux(b, stream, record, &out,
                 aux_used < budget.samples ? budget.samples - aux_used : 0);
      }
    }
    rb.end_pass();
    if (b.aux && b.aux_consumed) b.aux->release(b.aux_consumed_to);
    b.skipped_bytes = rb.skipped_bytes();
    b.corrupt_heads = rb.corrupt_heads();
  }
  // A retired buffer's counts stay in the totals.
  for (const Buffer& b : buffers_) {
    skipped += b.skipped_bytes;
    corrupt_heads += b.corrupt_heads;
  }
  totals_.skipped_bytes = skipped;
  totals_.corrupt_heads = corrupt_heads;
  ++totals_.passes;
  out.totals = totals_;
  return read;
}

}  // namespace profcollect
