#include "mapper/bb_addr_map.h"
#include "record/hex_text.h"

#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

namespace profcollect {

namespace {

using Kind = BbAddrMapError::Kind;

constexpr uint8_t kLatestVersion = 2;  // what LLVM 19 writes and the highest it reads
constexpr uint8_t kKnownFeatures = 0xf;
constexpr uint32_t kKnownMetadata = 0x1f;

// Reads one section; every read checks what is left first, and every failure names the byte.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, std::string_view where) : bytes_(bytes), where_(where) {}

  size_t left() const { return bytes_.size() - pos_; }
  size_t position() const { return pos_; }

  uint8_t u8(const char* what) {
    if (left() == 0) cut_short(what);
    return bytes_[pos_++];
  }

  uint64_t address(const BbAddrMapEncoding& encoding, const char* what) {
    const size_t n = encoding.address_size;
    if (n > left()) cut_short(what);
    uint64_t value = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint8_t byte = bytes_[pos_ + (encoding.little_endian ? n - 1 - i : i)];
      value = value << 8 | byte;
    }
    pos_ += n;
    return value;
  }

  uint64_t uleb(const char* what) {
    const size_t start = pos_;
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (left() == 0) cut_short(what);
      const uint8_t byte = bytes_[pos_++];
      // The tenth byte may only hold bit 63: anything more does not fit 64 bits.
      if (shift == 63 && (byte & 0x7e) != 0) fail(Kind::Malformed, start, too_big(what, 64));
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
      if (shift == 63) fail(Kind::Malformed, start, too_big(what, 64));
    }
  }

  // LLVM keeps IDs, offsets, sizes and metadata in 32 bits and refuses wider values.
  uint32_t uleb32(const char* what) {
    const size_t start = pos_;
    const uint64_t value = uleb(what);
    if (value > UINT32_MAX) fail(Kind::Malformed, start, too_big(what, 32));
    return static_cast<uint32_t>(value);
  }

  // A count of things that each take at least `min_bytes`: more than what is left can hold is
  // damage, and must not size an allocation.
  size_t count(const char* what, size_t min_bytes) {
    const size_t start = pos_;
    const uint64_t n = uleb(what);
    if (n > left() / min_bytes) {
      fail(Kind::Malformed, start,
           std::string(what) + " (" + std::to_string(n) + ") is more than the " +
               std::to_string(left()) + " bytes left can hold");
    }
    return static_cast<size_t>(n);
  }

  [[noreturn]] void fail(Kind kind, size_t at, const std::string& why) const {
    std::string message = where_.empty() ? std::string() : std::string(where_) + ": ";
    message += "at byte " + hex_address(at) + " of the section: " + why;
    throw BbAddrMapError(kind, message, at);
  }

 private:
  [[noreturn]] void cut_short(const char* what) const {
    fail(Kind::Malformed, pos_, std::string("the section ends inside ") + what);
  }
  static std::string too_big(const char* what, int bits) {
    return std::string(what) + " does not fit " + std::to_string(bits) + " bits";
  }

  std::span<const uint8_t> bytes_;
  std::string_view where_;
  size_t pos_ = 0;
};

BbBlock read_block(Cursor& in, uint8_t version, uint32_t index, uint32_t& previous_end) {
  BbBlock b;
  const size_t at = in.position();
  b.id = version >= 2 ? in.uleb32("a block ID") : index;
  const uint32_t offset = in.uleb32("a block offset");
  b.size = in.uleb32("a block size");
  const size_t metadata_at = in.position();
  const uint32_t metadata = in.uleb32("a block's metadata");
  if ((metadata & ~kKnownMetadata) != 0)
    in.fail(Kind::Malformed, metadata_at,
            "unknown block metadata bits in " + hex_address(metadata));
  b.has_return = metadata & 1u;
  b.has_tail_call = metadata & 2u;
  b.is_eh_pad = metadata & 4u;
  b.can_fall_through = metadata & 8u;
  b.has_indirect_branch = metadata & 16u;

  // From version 1 on the offset counts from the end of the previous block of the range; in
  // version 0 from the range's start, and blocks came in address order all the same.
  const uint64_t start = version >= 1 ? uint64_t{previous_end} + offset : offset;
  if (version == 0 && start < previous_end)
    in.fail(Kind::Malformed, at, "a block before the end of the one listed before it");
  const uint64_t end = start + b.size;
  if (end > UINT32_MAX) in.fail(Kind::Malformed, at, "a block ending 4 GiB past its range");
  b.offset = static_cast<uint32_t>(start);
  previous_end = static_cast<uint32_t>(end);
  return b;
}

BbRange read_range(Cursor& in, const BbAddrMapEncoding& encoding, uint8_t version) {
  BbRange range;
  const size_t at = in.position();
  range.address = in.address(encoding, "a function or range address");
  // A block takes at least one byte for each of its ULEB fields.
  const size_t blocks = in.count("the number of blocks", version >= 2 ? 4 : 3);
  range.blocks.reserve(blocks);
  uint32_t previous_end = 0;
  for (size_t i = 0; i < blocks; ++i)
    range.blocks.push_back(read_block(in, version, static_cast<uint32_t>(i), previous_end));
  if (previous_end > UINT64_MAX - range.address)
    in.fail(Kind::Malformed, at, "the range at " + hex_address(range.address) + " passes 2^64");
  return range;
}

void read_pgo(Cursor& in, BbFunction& f) {
  if (f.features.func_entry_count) f.entry_count = in.uleb("the function's entry count");
  if (!f.features.has_pgo_blocks()) return;
  const size_t blocks = f.block_count();
  // One byte at least per block (a frequency or a successor count).
  if (blocks > in.left()) {
    in.fail(Kind::Malformed, in.position(),
            "PGO data for " + std::to_string(blocks) + " blocks is more than the " +
                std::to_string(in.left()) + " bytes left can hold");
  }
  f.pgo_blocks.reserve(blocks);
  for (size_t i = 0; i < blocks; ++i) {
    BbPgoBlock b;
    if (f.features.bb_freq) b.frequency = in.uleb("a block frequency");
    if (f.features.br_prob) {
      const size_t successors = in.count("the number of successors", 2);
      b.successors.reserve(successors);
      for (size_t s = 0; s < successors; ++s) {
        BbSuccessor succ;
        succ.id = in.uleb32("a successor's ID");
        succ.probability = in.uleb32("a branch probability");
        b.successors.push_back(succ);
      }
    }
    f.pgo_blocks.push_back(std::move(b));
  }
}

BbFunction read_function(Cursor& in, const BbAddrMapEncoding& encoding) {
  BbFunction f;
  f.section_offset = in.position();
  f.version = in.u8("a function's version");
  if (f.version > kLatestVersion) {
    in.fail(Kind::Unsupported, f.section_offset,
            "version " + std::to_string(f.version) +
                " of SHT_LLVM_BB_ADDR_MAP (this reader knows versions 0 to 2, as LLVM 19)");
  }
  const size_t feature_at = in.position();
  const uint8_t feature = in.u8("a function's feature byte");
  if ((feature & ~kKnownFeatures) != 0)
    in.fail(Kind::Malformed, feature_at, "unknown feature bits in " + hex_address(feature));
  if (feature != 0 && f.version < 2) {
    in.fail(Kind::Malformed, feature_at,
            "features " + hex_address(feature) + " in a version " + std::to_string(f.version) +
                " entry (features need version 2)");
  }
  f.features.func_entry_count = feature & 1u;
  f.features.bb_freq = feature & 2u;
  f.features.br_prob = feature & 4u;
  f.features.multi_bb_range = feature & 8u;

  size_t ranges = 1;
  if (f.features.multi_bb_range) {
    const size_t at = in.position();
    // A range takes its address and at least one byte of block count.
    ranges = in.count("the number of ranges", size_t{encoding.address_size} + 1);
    if (ranges == 0) in.fail(Kind::Malformed, at, "a function of zero ranges");
  }
  f.ranges.reserve(ranges);
  for (size_t r = 0; r < ranges; ++r) f.ranges.push_back(read_range(in, encoding, f.version));
  if (f.features.has_pgo()) read_pgo(in, f);
  return f;
}

}  // namespace

size_t BbFunction::block_count() const {
  size_t n = 0;
  for (const BbRange& r : ranges) n += r.blocks.size();
  return n;
}

BbAddrMap BbAddrMap::decode(std::span<const uint8_t> section, BbAddrMapEncoding encoding,
                            std::string_view where) {
  if (encoding.address_size != 4 && encoding.address_size != 8)
    throw std::invalid_argument("an address size of 4 or 8 bytes");
  BbAddrMap map;
  Cursor in(section, where);
  while (in.left() > 0) {
    if (map.functions_.size() == UINT32_MAX)
      in.fail(Kind::Malformed, in.position(), "more than 2^32 functions");
    map.functions_.push_back(read_function(in, encoding));
  }
  map.build_index();
  return map;
}

BbAddrMap BbAddrMap::load(const ElfBinary& binary) {
  const std::string& path = binary.path();
  std::vector<const ElfSection*> sections;
  bool old_type = false;
  for (const ElfSection& s : binary.sections()) {
    if (s.type == kShtLlvmBbAddrMap) sections.push_back(&s);
    old_type = old_type || s.type == kShtLlvmBbAddrMapV0;
  }
  if (sections.empty() && old_type) {
    throw BbAddrMapError(Kind::Unsupported,
                         path +
                             ": only an SHT_LLVM_BB_ADDR_MAP_V0 section (LLVM 16 and older), "
                             "which neither this reader nor LLVM 19 reads; rebuild with clang 17 "
                             "or later and -fbasic-block-address-map");
  }
  if (sections.empty()) {
    throw BbAddrMapError(Kind::NotBuiltWithAddressMap,
                         path +
                             ": no .llvm_bb_addr_map section (SHT_LLVM_BB_ADDR_MAP): it was not "
                             "built with clang's -fbasic-block-address-map");
  }
  if (binary.elf_type() == ET_REL) {
    throw BbAddrMapError(Kind::Relocatable,
                         path +
                             ": a relocatable object, whose .llvm_bb_addr_map holds relocations "
                             "in place of function addresses; only linked executables and shared "
                             "objects are read");
  }
  const BbAddrMapEncoding encoding{static_cast<uint8_t>(binary.is_64bit() ? 8 : 4),
                                   binary.little_endian()};
  BbAddrMap map;
  for (const ElfSection* s : sections) {
    const std::string where = path + ": section " + s->name + " [" + std::to_string(s->index) +
                              "] at file offset " + hex_address(s->offset);
    if ((s->flags & SHF_COMPRESSED) != 0) {
      throw BbAddrMapError(Kind::Unsupported,
                           where +
                               ": compressed (SHF_COMPRESSED), which this reader does not "
                               "decompress");
    }
    const std::span<const uint8_t> bytes = binary.section_bytes(*s);
    if (bytes.size() != s->size) {
      throw BbAddrMapError(Kind::Malformed, where + ": libelf gives " +
                                                std::to_string(bytes.size()) + " of its " +
                                                std::to_string(s->size) + " bytes");
    }
    map.append(decode(bytes, encoding, where));
  }
  map.build_index();
  return map;
}

void BbAddrMap::append(BbAddrMap&& other) {
  if (other.functions_.size() > UINT32_MAX - functions_.size())
    throw BbAddrMapError(Kind::Malformed, "more than 2^32 functions");
  functions_.insert(functions_.end(), std::make_move_iterator(other.functions_.begin()),
                    std::make_move_iterator(other.functions_.end()));
}

void BbAddrMap::build_index() {
  by_address_.clear();
  by_function_.clear();
  by_function_.reserve(functions_.size());
  for (uint32_t f = 0; f < functions_.size(); ++f) {
    by_function_.push_back(f);
    const std::vector<BbRange>& ranges = functions_[f].ranges;
    for (uint32_t r = 0; r < ranges.size(); ++r)
      by_address_.push_back(RangeRef{ranges[r].address, ranges[r].end(), f, r});
  }
  std::stable_sort(by_address_.begin(), by_address_.end(),
                   [](const RangeRef& a, const RangeRef& b) { return a.start < b.start; });
  std::stable_sort(by_function_.begin(), by_function_.end(), [this](uint32_t a, uint32_t b) {
    return functions_[a].address() < functions_[b].address();
  });
}

const BbFunction* BbAddrMap::function_at(uint64_t address) const {
  auto it =
      std::lower_bound(by_function_.begin(), by_function_.end(), address,
                       [this](uint32_t f, uint64_t a) { return functions_[f].address() < a; });
  if (it == by_function_.end() || functions_[*it].address() != address) return nullptr;
  return &functions_[*it];
}

BbLocation BbAddrMap::find(uint64_t address) const {
  // The ranges starting last at or before the address, the first of them in section order.
  auto after = std::upper_bound(by_address_.begin(), by_address_.end(), address,
                                [](uint64_t a, const RangeRef& r) { return a < r.start; });
  if (after == by_address_.begin()) return {};
  const uint64_t start = std::prev(after)->start;
  auto it = std::lower_bound(by_address_.begin(), after, start,
                             [](const RangeRef& r, uint64_t s) { return r.start < s; });
  it = std::find_if(it, after, [&](const RangeRef& r) { return address < r.end; });
  if (it == after) return {};

  const BbFunction& function = functions_[it->function];
  const BbRange& range = function.ranges[it->range];
  BbLocation location{&function, &range, nullptr};
  // The range's end is at most 4 GiB past its start (read_block), so the offset fits 32 bits.
  const auto offset = static_cast<uint32_t>(address - range.address);
  auto block = std::upper_bound(range.blocks.begin(), range.blocks.end(), offset,
                                [](uint32_t o, const BbBlock& b) { return o < b.offset; });
  if (block != range.blocks.begin() && offset < std::prev(block)->end())
    location.block = &*std::prev(block);
  return location;
}

}  // namespace profcollect
