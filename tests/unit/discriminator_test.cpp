// Discriminator decoding against LLVM's encoding (DILocation::encodeDiscriminator in
// llvm/include/llvm/IR/DebugInfoMetadata.h), restated here as the encoder.
#include "mapper/discriminator.h"

#include <gtest/gtest.h>

namespace profcollect {
namespace {

// LLVM's prefix encoding of one component: 0 is a single 1 bit; otherwise a 0 bit then the value
// in 6 bits (below 32) or 13 bits with bit 6 set.
uint32_t encode_component(uint32_t c) {
  if (c == 0) return 1;
  const uint32_t u = c & 0xfff;
  const uint32_t prefix = u > 0x1f ? (((u & 0xfe0) << 1) | (u & 0x1f) | 0x20) : u;
  return prefix << 1;
}
uint32_t component_bits(uint32_t c) { return c == 0 ? 1 : (c > 0x1f ? 14 : 7); }

uint32_t encode(uint32_t base, uint32_t factor, uint32_t copy) {
  const uint32_t parts[3] = {base, factor, copy};
  uint64_t remaining = uint64_t{base} + factor + copy;
  uint32_t result = 0, shift = 0;
  for (int i = 0; remaining > 0; ++i) {
    remaining -= parts[i];
    result |= encode_component(parts[i]) << shift;
    shift += component_bits(parts[i]);
  }
  return result;
}

TEST(Discriminator, DecodesWhatLlvmEncodes) {
  for (uint32_t base : {0u, 1u, 2u, 3u, 31u, 32u, 100u, 4095u}) {
    for (uint32_t factor : {0u, 1u, 2u, 4u, 8u, 16u, 31u, 32u, 64u}) {
      for (uint32_t copy : {0u, 1u, 5u}) {
        const uint32_t d = encode(base, factor, copy);
        SCOPED_TRACE(::testing::Message() << base << "/" << factor << "/" << copy << " -> " << d);
        EXPECT_EQ(base_discriminator(d, DiscriminatorEncoding::Classic), base);
        EXPECT_EQ(duplication_factor(d, DiscriminatorEncoding::Classic), factor == 0 ? 1u : factor);
      }
    }
  }
}

// Values clang-19 wrote into a vectorized loop's line table (llvm-dwarfdump --debug-line).
TEST(Discriminator, ValuesFromAVectorizedLoop) {
  EXPECT_EQ(base_discriminator(516, DiscriminatorEncoding::Classic), 2u);
  EXPECT_EQ(duplication_factor(516, DiscriminatorEncoding::Classic), 2u);
  EXPECT_EQ(base_discriminator(2052, DiscriminatorEncoding::Classic), 2u);
  EXPECT_EQ(duplication_factor(2052, DiscriminatorEncoding::Classic), 8u);
  EXPECT_EQ(base_discriminator(9, DiscriminatorEncoding::Classic), 0u);
  EXPECT_EQ(duplication_factor(9, DiscriminatorEncoding::Classic), 2u);
  EXPECT_EQ(base_discriminator(4, DiscriminatorEncoding::Classic), 2u);
  EXPECT_EQ(duplication_factor(4, DiscriminatorEncoding::Classic), 1u);
}

TEST(Discriminator, FlowSensitiveValuesAreUsedWhole) {
  EXPECT_EQ(base_discriminator(2952801794u, DiscriminatorEncoding::FlowSensitive), 2952801794u);
  EXPECT_EQ(duplication_factor(2052, DiscriminatorEncoding::FlowSensitive), 1u);
}

TEST(Discriminator, PseudoProbeDiscriminatorsGiveTheirBaseOrProbeIndex) {
  // Low three bits set: a pseudo probe. Bit 28 set: a DWARF base discriminator in bits 16-18.
  const uint32_t with_base = 0x7u | (5u << 3) | (3u << 16) | 0x10000000u;
  EXPECT_EQ(base_discriminator(with_base, DiscriminatorEncoding::Classic), 3u);
  const uint32_t index_only = 0x7u | (42u << 3);
  EXPECT_EQ(base_discriminator(index_only, DiscriminatorEncoding::Classic), 42u);
}

}  // namespace
}  // namespace profcollect
