#include "collector/records/zstd_stream_decoder.h"

#include <zstd.h>

#include <algorithm>
#include <new>
#include <string>

#include "collector/records/byte_cursor.h"

namespace profcollect {

ZstdStreamDecoder::ZstdStreamDecoder(size_t max_output)
    : ctx_(ZSTD_createDCtx()), max_output_(max_output) {
  if (!ctx_) throw std::bad_alloc();
}

ZstdStreamDecoder::~ZstdStreamDecoder() { ZSTD_freeDCtx(ctx_); }

void ZstdStreamDecoder::decompress(std::span<const uint8_t> input, std::vector<uint8_t>& out,
                                   size_t& used) {
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  const size_t step = ZSTD_DStreamOutSize();  // one zstd block
  const size_t start = used;
  for (;;) {
    // Checked before the buffer grows, so it never grows past the limit.
    if (used - start + step > max_output_)
      throw RecordFormatError("compressed data decompresses to more than " +
                              std::to_string(max_output_) + " bytes in one record");
    if (out.size() - used < step) out.resize(std::max(out.size() * 2, used + step));
    ZSTD_outBuffer o{out.data() + used, out.size() - used, 0};
    size_t rc = ZSTD_decompressStream(ctx_, &o, &in);
    if (ZSTD_isError(rc))
      throw RecordFormatError(std::string("bad compressed data: ") + ZSTD_getErrorName(rc));
    used += o.pos;
    // Done when all input is consumed and the output was not filled (a full output may leave
    // data buffered inside the context).
    if (in.pos == in.size && o.pos < o.size) return;
  }
}

}  // namespace profcollect
