#include "mapper/bolt_address_translation.h"
#include "record/hex_text.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace profcollect {

namespace {

constexpr uint32_t kNoteTypeBat = 1;         // BinarySection::NT_BOLT_BAT
constexpr uint64_t kMaxOffset = UINT32_MAX;  // BOLT keeps offsets in 32 bits

// Reads the note's description; every read checks what is left first.
class BatCursor {
 public:
  BatCursor(std::span<const uint8_t> bytes, size_t base) : bytes_(bytes), base_(base) {}

  size_t left() const { return bytes_.size() - pos_; }
  size_t position() const { return base_ + pos_; }

  uint64_t uleb(const char* what) {
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (pos_ == bytes_.size()) fail(std::string("the table ends inside ") + what);
      const uint8_t byte = bytes_[pos_++];
      if (shift == 63 && (byte & 0x7e) != 0) fail(std::string(what) + " does not fit 64 bits");
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
      if (shift == 63) fail(std::string(what) + " does not fit 64 bits");
    }
  }

  int64_t sleb(const char* what) {
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte = 0;
    do {
      if (pos_ == bytes_.size()) fail(std::string("the table ends inside ") + what);
      if (shift > 63) fail(std::string(what) + " does not fit 64 bits");
      byte = bytes_[pos_++];
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40)) value |= ~uint64_t{0} << shift;  // sign-extend
    return static_cast<int64_t>(value);
  }

  uint64_t u64(const char* what) {
    std::span<const uint8_t> b = take(8, what);
    uint64_t value = 0;
    for (int i = 7; i >= 0; --i) value = value << 8 | b[i];
    return value;
  }

  std::span<const uint8_t> take(size_t n, const char* what) {
    if (n > left()) fail(std::string("the table ends inside ") + what);
    std::span<const uint8_t> out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  // A count of things that each take at least one byte: more than the bytes left is damage
  // (and must not size an allocation).
  size_t count(const char* what) {
    const uint64_t n = uleb(what);
    if (n > left()) fail(std::string(what) + " (" + std::to_string(n) + ") exceeds the table");
    return static_cast<size_t>(n);
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw BatError(why + " (byte " + std::to_string(position()) + " of the section)");
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t base_;
  size_t pos_ = 0;
};

// One function's or fragment's entries, after its header. `address` is the fragment's start;
// `previous` the last address written (the encoding's running address).
void read_entries(BatCursor& in, BatFragment& f, uint64_t& previous, uint64_t skew) {
  const size_t n = in.count("the number of entries");
  const size_t equal = in.uleb("the number of equal entries");
  if (equal > n)
    in.fail("more equal entries than entries in the fragment at " + hex_address(f.address));
  std::span<const uint8_t> bits;
  if (equal > 0) bits = in.take((equal + 7) / 8, "the branch bits");
  f.entries.reserve(n);
  uint64_t input = 0;  // with the branch bit as its lowest bit
  for (size_t i = 0; i < n; ++i) {
    const uint64_t output_address = previous + in.uleb("an output offset");  // mod 2^64
    previous = output_address;
    const uint64_t output = output_address - f.address;
    if (output > kMaxOffset)
      in.fail("an output offset past 4 GiB in the fragment at " + hex_address(f.address));
    if (i < equal) {
      const uint64_t branch = bits[i / 8] >> (i % 8) & 1u;
      input = (output + skew) << 1 | branch;
    } else {
      input += static_cast<uint64_t>(in.sleb("an input offset"));
    }
    if ((input >> 1) > kMaxOffset)
      in.fail("an input offset out of range in the fragment at " + hex_address(f.address));
    if (!f.entries.empty() && output < f.entries.back().output_offset)
      in.fail("entries out of order in the fragment at " + hex_address(f.address));
    f.entries.push_back({output, input >> 1, (input & 1u) != 0});
    if ((input & 1u) == 0) {
      in.u64("a block hash");
      in.uleb("a block index");
    }
  }
}

}  // namespace

std::optional<BoltAddressTranslation> BoltAddressTranslation::load(const ElfBinary& binary) {
  const ElfSection* section = binary.section_by_name(kSectionName);
  if (section == nullptr) return std::nullopt;
  if (!section->has_file_data()) throw BatError("the section has no contents in the file");
  return parse(binary.section_bytes(*section));
}

BoltAddressTranslation BoltAddressTranslation::parse(std::span<const uint8_t> note) {
  BatCursor header(note, 0);
  const auto u32 = [&](const char* what) {
    std::span<const uint8_t> b = header.take(4, what);
    return static_cast<uint32_t>(b[0] | b[1] << 8 | b[2] << 16 | static_cast<uint32_t>(b[3]) << 24);
  };
  const uint32_t name_size = u32("the note header");
  const uint32_t desc_size = u32("the note header");
  const uint32_t type = u32("the note header");
  if (type != kNoteTypeBat)
    header.fail("the note's type is " + std::to_string(type) + ", not BAT's 1");
  const uint64_t name_padded = (uint64_t{name_size} + 3) & ~uint64_t{3};
  if (name_padded > header.left() || desc_size > header.left() - name_padded)
    header.fail("the note's sizes exceed the section");
  std::span<const uint8_t> name = header.take(static_cast<size_t>(name_padded), "the note's name");
  if (name_size < 4 || name[0] != 'B' || name[1] != 'O' || name[2] != 'L' || name[3] != 'T')
    header.fail("the note's name is not BOLT");
  const size_t desc_start = header.position();
  BatCursor in(note.subspan(desc_start, desc_size), desc_start);

  BoltAddressTranslation bat;
  uint64_t previous = 0;
  std::vector<uint64_t> hot;
  const size_t hot_count = in.count("the number of hot functions");
  for (size_t i = 0; i < hot_count; ++i) {
    BatFragment f;
    f.address = previous + in.uleb("a function address");
    f.hot_address = f.address;
    previous = f.address;
    f.hash = in.u64("a function hash");
    f.blocks = in.uleb("the number of blocks");
    const size_t secondary = in.count("the number of secondary entry points");
    read_entries(in, f, previous, 0);
    uint64_t entry = 0;
    for (size_t s = 0; s < secondary; ++s) {
      entry += in.uleb("a secondary entry point");
      if (entry > kMaxOffset)
        in.fail("a secondary entry point past 4 GiB at " + hex_address(f.address));
      f.secondary_entries.push_back(entry);
    }
    hot.push_back(f.address);
    bat.fragments_.push_back(std::move(f));
  }
  bat.hot_functions_ = hot_count;
  const size_t cold_count = in.count("the number of cold fragments");
  uint64_t hot_index = 0;
  for (size_t i = 0; i < cold_count; ++i) {
    BatFragment f;
    f.cold = true;
    f.address = previous + in.uleb("a fragment address");
    previous = f.address;
    hot_index += in.uleb("a hot function index");
    if (hot_index >= hot.size())
      in.fail("the cold fragment at " + hex_address(f.address) + " names hot function " +
              std::to_string(hot_index) + " of " + std::to_string(hot.size()));
    f.hot_address = hot[hot_index];
    const uint64_t skew = in.uleb("a cold fragment's skew");
    if (skew > kMaxOffset)
      in.fail("the skew of the cold fragment at " + hex_address(f.address) + " is past 4 GiB");
    read_entries(in, f, previous, skew);
    bat.fragments_.push_back(std::move(f));
  }
  if (in.left() != 0)
    in.fail(std::to_string(in.left()) + " bytes follow the tables (not LLVM 19's layout)");
  bat.mark_input_blocks();
  std::stable_sort(
      bat.fragments_.begin(), bat.fragments_.end(),
      [](const BatFragment& a, const BatFragment& b) { return a.address < b.address; });
  for (size_t i = 1; i < bat.fragments_.size(); ++i) {
    if (bat.fragments_[i].address == bat.fragments_[i - 1].address)
      throw BatError("two fragments start at " + hex_address(bat.fragments_[i].address));
  }
  return bat;
}

void BoltAddressTranslation::mark_input_blocks() {
  // The input block starts of each function: its block entries, in all of its fragments.
  std::vector<std::pair<uint64_t, uint64_t>> starts;  // (hot address, input offset)
  for (const BatFragment& f : fragments_)
    for (const BatEntry& e : f.entries)
      if (!e.branch) starts.emplace_back(f.hot_address, e.input_offset);
  std::sort(starts.begin(), starts.end());
  for (BatFragment& f : fragments_) {
    for (BatEntry& e : f.entries) {
      auto next = std::upper_bound(starts.begin(), starts.end(),
                                   std::make_pair(f.hot_address, e.input_offset));
      if (next != starts.end() && next->first == f.hot_address) e.input_block_end = next->second;
    }
  }
}

const BatFragment* BoltAddressTranslation::fragment(uint64_t address) const {
  auto it = std::lower_bound(fragments_.begin(), fragments_.end(), address,
                             [](const BatFragment& f, uint64_t a) { return f.address < a; });
  return it != fragments_.end() && it->address == address ? &*it : nullptr;
}

namespace {

// The first entry whose output offset is past `offset` (std::multimap::upper_bound).
std::vector<BatEntry>::const_iterator entry_after(const BatFragment& f, uint64_t offset) {
  return std::upper_bound(f.entries.begin(), f.entries.end(), offset,
                          [](uint64_t o, const BatEntry& e) { return o < e.output_offset; });
}

}  // namespace

uint64_t BoltAddressTranslation::translate(const BatFragment& fragment, uint64_t offset,
                                           bool branch_source) {
  auto it = entry_after(fragment, offset);
  if (it == fragment.entries.begin()) return offset;
  --it;
  if (branch_source) return it->input_offset;
  const uint64_t input = offset - it->output_offset + it->input_offset;
  return std::min(input, it->input_block_end);
}

void BoltAddressTranslation::fall_throughs(const BatFragment& fragment, uint64_t from, uint64_t to,
                                           std::vector<std::pair<uint64_t, uint64_t>>& out) {
  out.clear();
  if (from >= to) return;
  const auto& e = fragment.entries;
  auto first = entry_after(fragment, from);
  // Back to the block holding `from`: branch entries are not block boundaries.
  do {
    if (first == e.begin()) return;
    --first;
  } while (first->branch);
  auto last = entry_after(fragment, to);
  if (last == e.begin()) return;
  --last;
  if (first->output_offset >= last->output_offset) return;
  for (auto it = first; it != last;) {
    const uint64_t start = it->output_offset;
    if (it->branch) {
      ++it;
      continue;
    }
    ++it;
    while (it->branch && it != last) ++it;
    if (it->branch) break;
    out.emplace_back(start, it->output_offset);
  }
}

}  // namespace profcollect
