#include "collector/input/perf_data_features.h"

#include <string>
#include <vector>

#include "collector/records/byte_cursor.h"
#include "collector/records/perf_abi.h"

namespace profcollect {

namespace abi = perf_abi;

namespace {

// perf's do_write_string(): u32 length (padded), then the NUL-terminated, zero-padded string.
std::string read_string(ByteCursor& c) {
  uint32_t len = c.u32();
  return std::string(bounded_string(c.bytes(len)));
}

void apply_build_ids(std::span<const uint8_t> bytes, PerfSessionState& state) {
  size_t pos = 0;
  while (bytes.size() - pos >= abi::kEventHeaderSize) {
    uint16_t size = abi::load<uint16_t>(bytes.data() + pos + 6);
    if (size < abi::kEventHeaderSize || size > bytes.size() - pos)
      throw RecordFormatError("bad build-id entry size " + std::to_string(size));
    state.add_build_id(parse_build_id_record(bytes.subspan(pos, size)));
    pos += size;
  }
}

// HEADER_EVENT_DESC: u32 count, u32 attr size, then per event: the attr, u32 number of ids,
// the name (string), the ids.
void apply_event_desc(std::span<const uint8_t> bytes, PerfSessionState& state) {
  ByteCursor c(bytes, "event desc");
  uint32_t count = c.u32();
  uint32_t attr_size = c.u32();
  for (uint32_t i = 0; i < count; ++i) {
    c.skip(attr_size);
    uint32_t nr_ids = c.u32();
    std::string name = read_string(c);
    uint64_t first_id = 0;
    if (nr_ids > 0) {
      // Through the cursor, so that a count the section cannot hold fails before any read.
      const uint8_t* ids = c.here();
      c.skip_array(nr_ids, 8);
      first_id = perf_abi::load<uint64_t>(ids);
    }
    state.name_by_desc(first_id, name);
  }
}

}  // namespace

BuildIdEntry parse_build_id_record(std::span<const uint8_t> record) {
  if (record.size() < abi::kBuildIdRecordFilename)
    throw RecordFormatError("build-id record of " + std::to_string(record.size()) +
                            " bytes is too short");
  BuildIdEntry e;
  e.cpumode_misc = abi::load<uint16_t>(record.data() + 4);
  e.pid = abi::load<uint32_t>(record.data() + abi::kBuildIdRecordPid);
  size_t id_size = BuildId::kMaxSize;
  if (e.cpumode_misc & abi::kMiscBuildIdSize)
    id_size = std::min<size_t>(record[abi::kBuildIdRecordSizeByte], BuildId::kMaxSize);
  e.build_id = BuildId(record.subspan(abi::kBuildIdRecordData, id_size));
  e.filename = std::string(bounded_string(record.subspan(abi::kBuildIdRecordFilename)));
  return e;
}

void apply_feature(unsigned feature, std::span<const uint8_t> bytes, PerfSessionState& state) {
  SessionInfo& info = state.info();
  try {
    ByteCursor c(bytes, "feature section");
    switch (feature) {
      case abi::kFeatBuildId:
        apply_build_ids(bytes, state);
        break;
      case abi::kFeatHostname:
        info.hostname = read_string(c);
        break;
      case abi::kFeatOsRelease:
        info.os_release = read_string(c);
        break;
      case abi::kFeatVersion:
        info.perf_version = read_string(c);
        break;
      case abi::kFeatArch:
        info.arch = read_string(c);
        break;
      case abi::kFeatCmdline: {
        uint32_t n = c.u32();
        std::vector<std::string> args;
        for (uint32_t i = 0; i < n; ++i) args.push_back(read_string(c));
        info.cmdline = std::move(args);
        break;
      }
      case abi::kFeatEventDesc:
        apply_event_desc(bytes, state);
        break;
      case abi::kFeatPmuMappings: {
        // u32 count, then per PMU: u32 type, its name (string).
        uint32_t n = c.u32();
        std::vector<std::pair<uint32_t, std::string>> pmus;
        for (uint32_t i = 0; i < n; ++i) {
          const uint32_t type = c.u32();
          pmus.emplace_back(type, read_string(c));
        }
        info.pmu_mappings = std::move(pmus);
        break;
      }
      default:
        break;
    }
  } catch (const RecordFormatError&) {
    // Dropped, see the header; a damaged build-id table is remembered, as it changes matching.
    if (feature == abi::kFeatBuildId) info.build_id_table_damaged = true;
  }
}

}  // namespace profcollect
