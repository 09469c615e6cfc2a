// Streaming zstd decompression of PERF_RECORD_COMPRESSED payloads. perf record -z compresses the
// ring-buffer contents as ONE zstd stream cut into records (each record ends at a flush point,
// not at a frame end), so one decompression context must live for the whole input, and a
// decompressed record may straddle two COMPRESSED records.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

struct ZSTD_DCtx_s;

namespace profcollect {

class ZstdStreamDecoder {
 public:
  ZstdStreamDecoder();
  ~ZstdStreamDecoder();
  ZstdStreamDecoder(const ZstdStreamDecoder&) = delete;
  ZstdStreamDecoder& operator=(const ZstdStreamDecoder&) = delete;

  // Decompresses `input` entirely, writing the output to `out` from index `used` on and
  // advancing `used`. `out` only grows (its bytes past `used` are scratch), so once warm no
  // allocation happens. Throws RecordFormatError on a corrupt stream.
  void decompress(std::span<const uint8_t> input, std::vector<uint8_t>& out, size_t& used);

 private:
  ZSTD_DCtx_s* ctx_;
};

}  // namespace profcollect
