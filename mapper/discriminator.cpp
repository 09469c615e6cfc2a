#include "mapper/discriminator.h"

namespace profcollect {

namespace {

// One component as LLVM's prefix encoding stores it: bit 0 set means 0; otherwise the value is
// in the next 5 bits, or, when bit 6 is set, in 5 + 7 bits around it.
uint32_t component_value(uint32_t bits) {
  if (bits & 1) return 0;
  bits >>= 1;
  return (bits & 0x20) ? (((bits >> 1) & 0xfe0) | (bits & 0x1f)) : (bits & 0x1f);
}

// The bits of the component that follows the lowest one.
uint32_t next_component(uint32_t bits) {
  if ((bits & 1) == 0) return bits >> ((bits & 0x40) ? 14 : 7);
  return bits >> 1;
}

bool is_pseudo_probe(uint32_t discriminator) { return (discriminator & 0x7) == 0x7; }

}  // namespace

uint32_t base_discriminator(uint32_t discriminator, DiscriminatorEncoding encoding) {
  if (encoding == DiscriminatorEncoding::FlowSensitive) return discriminator;
  if (is_pseudo_probe(discriminator)) {
    // Bit 28 says a DWARF base discriminator sits in bits 16-18; otherwise LLVM uses the probe
    // index so that call sites on one line stay apart.
    if (discriminator & 0x10000000u) return (discriminator >> 16) & 0x7;
    return (discriminator >> 3) & 0xffff;
  }
  return component_value(discriminator);
}

uint32_t duplication_factor(uint32_t discriminator, DiscriminatorEncoding encoding) {
  if (encoding == DiscriminatorEncoding::FlowSensitive) return 1;
  const uint32_t factor = component_value(next_component(discriminator));
  return factor == 0 ? 1 : factor;
}

}  // namespace profcollect
