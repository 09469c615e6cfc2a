#include "collector/records/raw_record_reader.h"

#include <algorithm>
#include <cstring>

#include "collector/records/byte_cursor.h"
#include "collector/records/perf_abi.h"
#include "collector/records/record_source.h"

namespace profcollect {

namespace abi = perf_abi;

RawRecordReader::RawRecordReader(BufferedInput input, uint32_t stream)
    : input_(std::move(input)), stream_(stream) {}

void RawRecordReader::fail(uint64_t offset, const std::string& reason) const {
  throw SourceError(file_name(), offset, reason);
}

bool RawRecordReader::next_decompressed(RawRecord& out) {
  decomp_begin_ += decomp_pending_;
  decomp_pending_ = 0;
  size_t left = decomp_end_ - decomp_begin_;
  if (left < abi::kEventHeaderSize) return false;
  const uint8_t* p = decompressed_.data() + decomp_begin_;
  uint16_t size = abi::load<uint16_t>(p + 6);
  if (size < abi::kEventHeaderSize)
    fail(decomp_offset_, "record of size " + std::to_string(size) +
                             " (smaller than its header) in decompressed data");
  if (size > left) return false;  // the rest comes with the next COMPRESSED record
  out.type = abi::load<uint32_t>(p);
  out.misc = abi::load<uint16_t>(p + 4);
  out.bytes = {p, size};
  out.offset = decomp_offset_;
  out.stream = stream_;
  decomp_pending_ = size;
  return true;
}

void RawRecordReader::decompress(std::span<const uint8_t> payload, uint64_t record_offset) {
  if (!zstd_) zstd_ = std::make_unique<ZstdStreamDecoder>();
  // Keep the unreturned tail (a record cut by the compressor's flush point) at the front.
  size_t tail = decomp_end_ - decomp_begin_;
  if (decomp_begin_ > 0 && tail > 0)
    std::memmove(decompressed_.data(), decompressed_.data() + decomp_begin_, tail);
  decomp_begin_ = 0;
  decomp_end_ = tail;
  decomp_offset_ = record_offset;
  try {
    zstd_->decompress(payload, decompressed_, decomp_end_);
  } catch (const RecordFormatError& e) {
    fail(record_offset, e.what());
  }
}

void RawRecordReader::take_auxtrace_payload(std::vector<uint8_t>& out) {
  if (pending_consume_) {
    input_.consume(pending_consume_);
    pending_consume_ = 0;
  }
  while (pending_payload_ > 0) {
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(pending_payload_, BufferedInput::kBufferSize));
    const size_t have = input_.fill(want);
    if (have == 0)
      fail(pending_payload_offset_,
           "truncated AUXTRACE payload (" + std::to_string(pending_payload_) + " bytes missing)");
    out.insert(out.end(), input_.data(), input_.data() + have);
    input_.consume(have);
    pending_payload_ -= have;
  }
}

bool RawRecordReader::next(RawRecord& out) {
  if (pending_consume_) {
    input_.consume(pending_consume_);
    pending_consume_ = 0;
  }
  if (pending_payload_ > 0) {
    const uint64_t payload = pending_payload_;
    pending_payload_ = 0;
    if (input_.skip(payload) != payload)
      fail(pending_payload_offset_, "truncated payload of record type " +
                                        std::to_string(abi::kAuxtrace) + " (" +
                                        std::to_string(payload) + " bytes announced)");
  }
  for (;;) {
    if (next_decompressed(out)) return true;

    const uint64_t offset = input_.offset();
    size_t have = input_.fill(abi::kEventHeaderSize);
    if (have == 0) {
      if (input_.limit() != BufferedInput::kToEnd && offset < input_.limit())
        fail(offset, "file ends " + std::to_string(input_.limit() - offset) +
                         " bytes before the end of its data section");
      if (decomp_end_ != decomp_begin_)
        fail(decomp_offset_, "compressed data ends inside a record (" +
                                 std::to_string(decomp_end_ - decomp_begin_) + " bytes left)");
      return false;
    }
    if (have < abi::kEventHeaderSize)
      fail(offset, "truncated record header (" + std::to_string(have) + " of 8 bytes)");
    const uint8_t* p = input_.data();
    const uint32_t type = abi::load<uint32_t>(p);
    const uint16_t size = abi::load<uint16_t>(p + 6);
    if (size < abi::kEventHeaderSize)
      fail(offset, "record of type " + std::to_string(type) + " has size " + std::to_string(size) +
                       ", smaller than its 8-byte header");
    have = input_.fill(size);
    if (have < size)
      fail(offset, "truncated record: type " + std::to_string(type) + " claims " +
                       std::to_string(size) + " bytes, only " + std::to_string(have) + " left");
    p = input_.data();

    switch (type) {
      case abi::kAuxtrace:
      case abi::kHeaderTracingData: {
        // Both are followed by a payload that their size does not count.
        const size_t field_end = type == abi::kAuxtrace ? 16 : 12;
        if (size < field_end) fail(offset, "record of type " + std::to_string(type) + " too short");
        uint64_t payload =
            type == abi::kAuxtrace ? abi::load<uint64_t>(p + 8) : abi::load<uint32_t>(p + 8);
        if (type == abi::kAuxtrace && keep_auxtrace_) {
          out.type = type;
          out.misc = abi::load<uint16_t>(p + 4);
          out.bytes = {p, size};
          out.offset = offset;
          out.stream = stream_;
          pending_consume_ = size;
          pending_payload_ = payload;
          pending_payload_offset_ = offset;
          return true;
        }
        input_.consume(size);
        if (input_.skip(payload) != payload)
          fail(offset, "truncated payload of record type " + std::to_string(type) + " (" +
                           std::to_string(payload) + " bytes announced)");
        continue;
      }
      case abi::kCompressed:
        decompress({p + 8, size - 8u}, offset);
        input_.consume(size);
        continue;
      case abi::kCompressed2: {
        if (size < 16) fail(offset, "COMPRESSED2 record too short");
        uint64_t data_size = abi::load<uint64_t>(p + 8);
        if (data_size > size - 16u)
          fail(offset, "COMPRESSED2 data_size " + std::to_string(data_size) +
                           " exceeds its record of " + std::to_string(size) + " bytes");
        decompress({p + 16, static_cast<size_t>(data_size)}, offset);
        input_.consume(size);
        continue;
      }
      default:
        out.type = type;
        out.misc = abi::load<uint16_t>(p + 4);
        out.bytes = {p, size};
        out.offset = offset;
        out.stream = stream_;
        pending_consume_ = size;
        return true;
    }
  }
}

}  // namespace profcollect
