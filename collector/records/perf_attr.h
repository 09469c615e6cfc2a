// One perf_event_attr as stored in a perf.data (attr section, HEADER_ATTR record or event-desc
// feature), reduced to what the reader needs: the public EventAttr plus the fields that decide
// the sample layout and the event's name.
#pragma once

#include <cstdint>
#include <span>

#include "collector/records/record_source.h"

namespace profcollect {

struct PerfAttr {
  EventAttr event;     // name left empty; see perf_event_name()
  uint64_t flags = 0;  // the attr's flag word (disabled, inherit, ..., exclude_guest, ...)
  uint64_t sample_regs_user = 0;
  uint64_t sample_regs_intr = 0;
  uint32_t bp_type = 0;
  uint64_t bp_addr = 0;      // also config1
  uint32_t stored_size = 0;  // attr.size as stored (0 in very old files)

  unsigned precise_ip() const;
};

// Parses an attr of `bytes.size()` bytes; fields beyond it read as zero, as the kernel does for
// an older, shorter attr. Throws RecordFormatError if fewer than the first 64 bytes are there.
PerfAttr parse_perf_attr(std::span<const uint8_t> bytes);

}  // namespace profcollect
