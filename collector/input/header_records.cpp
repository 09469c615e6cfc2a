#include "collector/input/header_records.h"

#include <string>

#include "collector/records/byte_cursor.h"
#include "collector/records/perf_abi.h"
#include "collector/input/perf_data_features.h"

namespace profcollect {

namespace abi = perf_abi;

namespace {

// HEADER_ATTR: header, the attr (attr.size bytes), then the attr's ids to the end.
void apply_attr(std::span<const uint8_t> rec, PerfSessionState& state) {
  ByteCursor c(rec, "HEADER_ATTR");
  c.skip(abi::kEventHeaderSize);
  if (c.remaining() < abi::kAttrSize + 4) throw RecordFormatError("HEADER_ATTR too short");
  uint32_t attr_size = abi::load<uint32_t>(c.here() + abi::kAttrSize);
  if (attr_size == 0) attr_size = abi::kAttrSizeVer0;
  if (attr_size > abi::kMaxAttrSize)
    throw RecordFormatError("HEADER_ATTR attr size " + std::to_string(attr_size) + " is too large");
  PerfAttr attr = parse_perf_attr(c.bytes(attr_size));
  // The ids are u64s but need not be 8-aligned in memory: copy them out one by one.
  size_t n = c.remaining() / 8;
  uint32_t index = state.add_attr(attr, {});
  for (size_t i = 0; i < n; ++i) state.add_id(index, c.u64());
}

// EVENT_UPDATE: header, u64 type, u64 id, data. Only the NAME kind matters here.
void apply_event_update(std::span<const uint8_t> rec, PerfSessionState& state) {
  ByteCursor c(rec, "EVENT_UPDATE");
  c.skip(abi::kEventHeaderSize);
  uint64_t type = c.u64();
  uint64_t id = c.u64();
  if (type == abi::kEventUpdateName)
    state.name_by_update(id, bounded_string(c.bytes(c.remaining())));
}

// ID_INDEX: header, u64 nr, then nr entries {id, idx, cpu, tid}: which attr (idx) an id is of.
void apply_id_index(std::span<const uint8_t> rec, PerfSessionState& state) {
  ByteCursor c(rec, "ID_INDEX");
  c.skip(abi::kEventHeaderSize);
  uint64_t nr = c.u64();
  if (nr > c.remaining() / 32) throw RecordFormatError("ID_INDEX count exceeds its record");
  for (uint64_t i = 0; i < nr; ++i) {
    uint64_t id = c.u64();
    uint64_t idx = c.u64();
    c.skip(16);
    if (idx < state.attr_count()) state.add_id(static_cast<uint32_t>(idx), id);
  }
}

}  // namespace

bool apply_header_record(const RawRecord& r, PerfSessionState& state) {
  switch (r.type) {
    case abi::kHeaderAttr:
      apply_attr(r.bytes, state);
      return true;
    case abi::kHeaderBuildId:
      state.add_build_id(parse_build_id_record(r.bytes));
      return true;
    case abi::kHeaderFeature: {
      ByteCursor c(r.bytes, "HEADER_FEATURE");
      c.skip(abi::kEventHeaderSize);
      uint64_t feature = c.u64();
      if (feature < abi::kFeatureBits)
        apply_feature(static_cast<unsigned>(feature), r.bytes.subspan(c.position()), state);
      return true;
    }
    case abi::kEventUpdate:
      apply_event_update(r.bytes, state);
      return true;
    case abi::kIdIndex:
      apply_id_index(r.bytes, state);
      return true;
    case abi::kFinishedRound:
      return false;
    default:
      // Every other perf-written type is metadata this reader has no use for.
      return r.type >= abi::kUserTypeStart;
  }
}

}  // namespace profcollect
