// What a DWARF line-table discriminator holds, decoded the way LLVM 19 encodes it
// (llvm/include/llvm/IR/DebugInfoMetadata.h, DILocation::encodeDiscriminator) and the way
// llvm-profgen reads it back for a sample profile.
//
// Classic (-fdebug-info-for-profiling) discriminators pack up to three components, lowest bits
// first: base discriminator, duplication factor, copy id. Each component is either a single 1
// bit (value 0) or a 0 bit followed by a prefix-encoded value (6 bits for values below 32, 13
// bits for values up to 4095). The sample profile keys a line by its base discriminator; the
// duplication factor says how many copies of the code an unrolled or vectorized loop runs per
// source iteration.
//
// Flow-sensitive discriminators (a binary with the `__llvm_fs_discriminator__` symbol) are not
// prefix encoded: the profile uses the value whole and the duplication factor is 1.
//
// Pseudo-probe discriminators (low three bits all set, which the classic encoding never
// produces) carry a probe index and possibly a 3-bit DWARF base discriminator.
#pragma once

#include <cstdint>

namespace profcollect {

enum class DiscriminatorEncoding : uint8_t { Classic, FlowSensitive };

// The discriminator a sample profile line carries ("<offset>.<this>").
uint32_t base_discriminator(uint32_t discriminator, DiscriminatorEncoding encoding);

// The duplication factor (>= 1) of the code at that location.
uint32_t duplication_factor(uint32_t discriminator, DiscriminatorEncoding encoding);

}  // namespace profcollect
