// Streaming zstd decompression of PERF_RECORD_COMPRESSED payloads. perf record -z compresses the
// ring-buffer contents as ONE zstd stream cut into records (each record ends at a flush point,
// not at a frame end), so one decompression context must live for the whole input, and a
// decompressed record may straddle two COMPRESSED records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

struct ZSTD_DCtx_s;

namespace profcollect {

class ZstdStreamDecoder {
 public:
  // What one input may decompress to. perf compresses at most one ring buffer's worth at a time
  // (and its own reader refuses more than the buffer's size); without a bound, 64 KiB of zstd
  // run-length blocks would make gigabytes.
  static constexpr size_t kMaxOutput = size_t{256} << 20;

  // `max_output`: what one input may decompress to (kMaxOutput; less in tests).
  explicit ZstdStreamDecoder(size_t max_output = kMaxOutput);
  ~ZstdStreamDecoder();
  ZstdStreamDecoder(const ZstdStreamDecoder&) = delete;
  ZstdStreamDecoder& operator=(const ZstdStreamDecoder&) = delete;

  // Decompresses `input` entirely, writing the output to `out` from index `used` on and
  // advancing `used`. `out` only grows (its bytes past `used` are scratch), so once warm no
  // allocation happens. Throws RecordFormatError on a corrupt stream, or when `input` makes more
  // than max_output bytes.
  void decompress(std::span<const uint8_t> input, std::vector<uint8_t>& out, size_t& used);

 private:
  ZSTD_DCtx_s* ctx_;
  size_t max_output_;
};

}  // namespace profcollect
