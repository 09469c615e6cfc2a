// ZstdStreamDecoder stops an input that decompresses to more than kMaxOutput: zstd run-length
// blocks cost 4 bytes per 128 KiB, so one 64 KiB COMPRESSED record could otherwise make 2 GiB.
#include <gtest/gtest.h>

#include <vector>

#include "collector/records/byte_cursor.h"
#include "collector/records/zstd_stream_decoder.h"

namespace profcollect {
namespace {

// A zstd frame (no content size, 128 KiB window) of `blocks` run-length blocks of 128 KiB.
std::vector<uint8_t> run_length_frame(size_t blocks) {
  std::vector<uint8_t> f = {0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38};
  for (size_t i = 0; i < blocks; ++i) {
    const uint32_t header = (uint32_t{131072} << 3) | (1u << 1) | (i + 1 == blocks ? 1u : 0u);
    f.insert(f.end(), {static_cast<uint8_t>(header), static_cast<uint8_t>(header >> 8),
                       static_cast<uint8_t>(header >> 16), 0x55});
  }
  return f;
}

TEST(ZstdStreamDecoderLimit, SmallFramesDecompressWhole) {
  ZstdStreamDecoder decoder;
  std::vector<uint8_t> out;
  size_t used = 0;
  decoder.decompress(run_length_frame(8), out, used);
  EXPECT_EQ(used, 8u * 131072);
  EXPECT_EQ(out[used - 1], 0x55);
}

TEST(ZstdStreamDecoderLimit, AnInputMakingMoreThanTheLimitFails) {
  constexpr size_t kLimit = 4 << 20;  // the reader's is kMaxOutput; the rule is the same
  ZstdStreamDecoder decoder(kLimit);
  std::vector<uint8_t> out;
  size_t used = 0;
  EXPECT_THROW(decoder.decompress(run_length_frame(kLimit / 131072 + 16), out, used),
               RecordFormatError);
  EXPECT_LE(out.size(), kLimit) << "the buffer never grows past the limit";
  // Under the limit, the same decoder type takes it all.
  ZstdStreamDecoder roomy(kLimit);
  std::vector<uint8_t> whole;
  size_t whole_used = 0;
  roomy.decompress(run_length_frame(kLimit / 131072 - 2), whole, whole_used);
  EXPECT_EQ(whole_used, (kLimit / 131072 - 2) * 131072);
}

}  // namespace
}  // namespace profcollect
