#include "collector/input/perf_data_header.h"

#include <array>
#include <vector>

#include "collector/records/byte_cursor.h"
#include "collector/records/perf_abi.h"
#include "collector/input/perf_data_features.h"
#include "collector/records/record_source.h"

namespace profcollect {

namespace abi = perf_abi;

namespace {

struct Section {
  uint64_t offset = 0, size = 0;
};

Section section_at(const uint8_t* p) {
  return {abi::load<uint64_t>(p), abi::load<uint64_t>(p + 8)};
}

// A section that a damaged header makes point outside the file would make us allocate or read
// nonsense: check it against the file's size first.
bool fits(const Section& s, uint64_t file_size) {
  return s.offset <= file_size && s.size <= file_size - s.offset;
}

void read_attrs(const InputFile& file, const Section& attrs, uint64_t entry_size,
                PerfSessionState& state) {
  const std::string& name = file.name();
  if (entry_size < abi::kAttrSizeVer0 + 16)
    throw OpenError(name, "attr entry size " + std::to_string(entry_size) + " is too small");
  if (!fits(attrs, file.size())) throw OpenError(name, "attr section lies outside the file");
  const uint64_t count = attrs.size / entry_size;
  uint64_t pos = attrs.offset;
  std::vector<uint8_t> attr_bytes;
  std::vector<uint64_t> ids;
  // Each attr's ids have a section of their own, so together they fit in the file; sections
  // that all point at the same large area would make reading the ids quadratic.
  uint64_t id_bytes = 0;
  for (uint64_t i = 0; i < count; ++i) {
    // Like perf: the attr's own size field says how long it is; its ids section follows it.
    uint8_t size_field[4];
    if (!file.pread_exact(size_field, 4, pos + abi::kAttrSize))
      throw OpenError(name, "attr " + std::to_string(i) + " is cut short");
    uint64_t attr_size = abi::load<uint32_t>(size_field);
    if (attr_size == 0) attr_size = abi::kAttrSizeVer0;
    if (attr_size < abi::kAttrSizeVer0 || attr_size > abi::kMaxAttrSize ||
        attr_size + 16 > entry_size)
      throw OpenError(name, "attr " + std::to_string(i) + " has an impossible size " +
                                std::to_string(attr_size));
    attr_bytes.resize(attr_size + 16);
    if (!file.pread_exact(attr_bytes.data(), attr_bytes.size(), pos))
      throw OpenError(name, "attr " + std::to_string(i) + " is cut short");
    PerfAttr attr = parse_perf_attr({attr_bytes.data(), static_cast<size_t>(attr_size)});
    Section id_section = section_at(attr_bytes.data() + attr_size);
    ids.clear();
    if (id_section.size > 0 && fits(id_section, file.size())) {
      id_bytes += id_section.size;
      if (id_bytes > file.size())
        throw OpenError(name, "the id sections of the attrs add up to more than the file");
      ids.resize(id_section.size / 8);
      if (!file.pread_exact(ids.data(), ids.size() * 8, id_section.offset))
        throw OpenError(name, "ids of attr " + std::to_string(i) + " are cut short");
    }
    state.add_attr(attr, ids);
    pos += attr_size + 16;
  }
}

void read_features(const InputFile& file, const uint8_t* bitmap, uint64_t table_offset,
                   PerfSessionState& state) {
  std::vector<uint8_t> bytes;
  uint64_t at = table_offset;
  for (unsigned bit = 0; bit < abi::kFeatureBits; ++bit) {
    if (!(abi::load<uint64_t>(bitmap + 8 * (bit / 64)) >> (bit % 64) & 1)) continue;
    uint8_t entry[16];
    if (!file.pread_exact(entry, sizeof entry, at)) {
      // Features are optional, but a build-id table the header announces and the file lost
      // changes how binaries are matched: that is said.
      for (unsigned rest = bit; rest < abi::kFeatBuildId + 1; ++rest) {
        if (rest == abi::kFeatBuildId &&
            (abi::load<uint64_t>(bitmap + 8 * (rest / 64)) >> (rest % 64) & 1)) {
          state.info().build_id_table_damaged = true;
        }
      }
      return;
    }
    at += sizeof entry;
    Section s = section_at(entry);
    switch (bit) {
      case abi::kFeatBuildId:
      case abi::kFeatHostname:
      case abi::kFeatOsRelease:
      case abi::kFeatVersion:
      case abi::kFeatArch:
      case abi::kFeatCmdline:
      case abi::kFeatEventDesc:
      case abi::kFeatPmuMappings:
        if (!fits(s, file.size()) ||
            (bytes.resize(s.size), !file.pread_exact(bytes.data(), bytes.size(), s.offset))) {
          if (bit == abi::kFeatBuildId) state.info().build_id_table_damaged = true;
          continue;
        }
        apply_feature(bit, bytes, state);
        break;
      default:
        break;
    }
  }
}

}  // namespace

PerfDataMode perf_data_mode(const uint8_t* first16, const std::string& name) {
  const uint64_t magic = abi::load<uint64_t>(first16);
  const uint64_t size = abi::load<uint64_t>(first16 + 8);
  if (magic == abi::kMagicV2Swapped)
    throw OpenError(name, "big-endian perf.data files are not supported");
  if (magic == abi::kMagicV1)
    throw OpenError(name, "perf.data format version 1 (perf before 2.6.38) is not supported");
  if (magic != abi::kMagicV2) throw OpenError(name, "at byte 0: bad magic: not a perf.data file");
  if (size == abi::kPipeHeaderSize) return PerfDataMode::Pipe;
  if (size == abi::kFileHeaderSize || size == abi::kFileHeaderSizeNoFeatures)
    return PerfDataMode::File;
  throw OpenError(name, "at byte 8: unsupported perf.data header size " + std::to_string(size));
}

DataSection read_file_header(const InputFile& file, PerfSessionState& state) {
  std::array<uint8_t, abi::kFileHeaderSize> h{};
  const std::string& name = file.name();
  if (!file.pread_exact(h.data(), 16, 0)) throw OpenError(name, "shorter than a perf.data header");
  const uint64_t header_size = abi::load<uint64_t>(h.data() + abi::kFhSize);
  if (header_size != abi::kFileHeaderSize && header_size != abi::kFileHeaderSizeNoFeatures)
    throw OpenError(name, "unsupported perf.data header size " + std::to_string(header_size));
  if (!file.pread_exact(h.data(), header_size, 0))
    throw OpenError(name, "shorter than its " + std::to_string(header_size) + "-byte header");

  read_attrs(file, section_at(h.data() + abi::kFhAttrs),
             abi::load<uint64_t>(h.data() + abi::kFhAttrSize), state);
  if (state.attr_count() == 0) throw OpenError(name, "no event attrs in the header");

  const Section data = section_at(h.data() + abi::kFhData);
  DataSection out;
  out.begin = data.offset;
  if (data.size == 0) {
    // A perf record that was killed never wrote the data size, nor the features that follow
    // the data: read records to the end of the file.
    out.end = BufferedInput::kToEnd;
    return out;
  }
  if (data.size > UINT64_MAX - data.offset) throw OpenError(name, "data section size overflows");
  out.end = data.offset + data.size;
  if (header_size == abi::kFileHeaderSize)
    read_features(file, h.data() + abi::kFhFeatures, out.end, state);
  return out;
}

}  // namespace profcollect
