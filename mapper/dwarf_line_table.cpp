#include "mapper/dwarf_line_table.h"

#include <algorithm>
#include <string>

namespace profcollect {

namespace {

class LineProgramReader {
 public:
  LineProgramReader(std::span<const uint8_t> data, uint64_t at, uint64_t end)
      : data_(data), at_(at), end_(end) {}

  uint64_t offset() const { return at_; }
  bool done() const { return at_ >= end_; }
  void seek(uint64_t to) {
    if (to > end_) fail("header points past the unit");
    at_ = to;
  }
  uint8_t u8() {
    need(1);
    return data_[at_++];
  }
  uint64_t fixed(unsigned bytes) {
    need(bytes);
    uint64_t value = 0;
    for (unsigned i = 0; i < bytes; ++i) value |= uint64_t{data_[at_ + i]} << (8 * i);
    at_ += bytes;
    return value;
  }
  uint64_t uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      const uint8_t byte = u8();
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
  }
  int64_t sleb() {
    // Assembled unsigned: a shift into the sign bit and the sign extension of a 64-bit value
    // (INT64_MIN) must not be signed arithmetic.
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte = 0;
    do {
      byte = u8();
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40)) value |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(value);
  }
  void skip(uint64_t bytes) {
    need(bytes);
    at_ += bytes;
  }
  uint64_t left() const { return end_ - at_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(".debug_line at offset " + std::to_string(at_) + ": " + what);
  }

 private:
  void need(uint64_t bytes) const {
    if (bytes > end_ - at_) fail("truncated line program");
  }
  std::span<const uint8_t> data_;
  uint64_t at_, end_;
};

// Standard opcodes (DWARF 5, 6.2.5.2) and extended ones (6.2.5.3).
enum : uint8_t {
  kCopy = 1,
  kAdvancePc,
  kAdvanceLine,
  kSetFile,
  kSetColumn,
  kNegateStmt,
  kSetBasicBlock,
  kConstAddPc,
  kFixedAdvancePc,
  kSetPrologueEnd,
  kSetEpilogueBegin,
  kSetIsa,
};
enum : uint8_t { kEndSequence = 1, kSetAddress = 2, kDefineFile = 3, kSetDiscriminator = 4 };

}  // namespace

void DwarfLineTable::add_row(const LineRow& row) {
  rows_.push_back(row);
  if (!row.end_sequence) return;
  Sequence sequence{rows_[sequence_start_].address, row.address, sequence_start_, rows_.size()};
  if (sequence.low < sequence.high) sequences_.push_back(sequence);
  sequence_start_ = rows_.size();
}

DwarfLineTable DwarfLineTable::parse(std::span<const uint8_t> debug_line, uint64_t offset) {
  DwarfLineTable table;
  if (offset >= debug_line.size()) {
    throw std::runtime_error(".debug_line has no line program at offset " + std::to_string(offset));
  }
  LineProgramReader header(debug_line, offset, debug_line.size());
  uint64_t length = header.fixed(4);
  unsigned offset_size = 4;
  if (length == 0xffffffffu) {
    length = header.fixed(8);
    offset_size = 8;
  }
  if (length > debug_line.size() - header.offset()) header.fail("unit length past the section");
  const uint64_t unit_end = header.offset() + length;
  LineProgramReader in(debug_line, header.offset(), unit_end);
  table.version_ = static_cast<uint16_t>(in.fixed(2));
  if (table.version_ < 2 || table.version_ > 5)
    in.fail("unsupported version " + std::to_string(table.version_));
  unsigned address_size = 8;
  if (table.version_ >= 5) {
    address_size = in.u8();
    in.u8();  // segment selector size
  }
  const uint64_t header_length = in.fixed(offset_size);
  if (header_length > in.left()) in.fail("header length past the unit");
  const uint64_t program_start = in.offset() + header_length;
  const unsigned min_inst_length = in.u8();
  const unsigned max_ops = table.version_ >= 4 ? std::max<unsigned>(in.u8(), 1) : 1;
  const bool default_is_stmt = in.u8() != 0;
  (void)default_is_stmt;
  const auto line_base = static_cast<int8_t>(in.u8());
  const unsigned line_range = in.u8();
  const unsigned opcode_base = in.u8();
  if (line_range == 0) in.fail("line_range 0");
  std::vector<uint8_t> opcode_lengths(opcode_base > 0 ? opcode_base - 1 : 0);
  for (uint8_t& n : opcode_lengths) n = in.u8();
  // Directory and file tables are not needed: go straight to the program.
  in.seek(program_start);

  const uint64_t tombstone =
      address_size >= 8 ? UINT64_MAX : (uint64_t{1} << (8 * address_size)) - 1;
  uint64_t address = 0, op_index = 0;
  // Unsigned, so that line advances wrap instead of overflowing; rows keep the low 32 bits, as
  // LLVM's unsigned Row.Line does.
  uint64_t line = 1;
  uint32_t discriminator = 0;
  bool tombstoned = false;
  auto reset = [&] {
    address = 0;
    op_index = 0;
    line = 1;
    discriminator = 0;
    tombstoned = false;
  };
  auto advance = [&](uint64_t operation_advance) {
    address += min_inst_length * ((op_index + operation_advance) / max_ops);
    op_index = (op_index + operation_advance) % max_ops;
  };
  auto emit = [&](bool end) {
    if (!tombstoned) {
      table.add_row(LineRow{address, static_cast<uint32_t>(line), discriminator, end});
    } else if (end) {
      table.sequence_start_ = table.rows_.size();
    }
    discriminator = 0;
  };

  while (!in.done()) {
    const uint8_t opcode = in.u8();
    if (opcode >= opcode_base) {
      const unsigned adjusted = opcode - opcode_base;
      advance(adjusted / line_range);
      line += static_cast<uint64_t>(line_base + static_cast<int>(adjusted % line_range));
      emit(false);
      continue;
    }
    switch (opcode) {
      case 0: {
        const uint64_t size = in.uleb();
        if (size == 0) break;
        // The length must stay inside the unit: past it, the offset of the next opcode would
        // wrap around and the program could run over the same bytes forever.
        if (size > in.left())
          in.fail("extended opcode of " + std::to_string(size) + " bytes past the unit");
        const uint64_t next = in.offset() + size;
        const uint8_t sub = in.u8();
        if (sub == kEndSequence) {
          emit(true);
          reset();
        } else if (sub == kSetAddress) {
          const auto bytes = static_cast<unsigned>(size - 1);
          if (bytes == 0 || bytes > 8)
            in.fail("DW_LNE_set_address of " + std::to_string(bytes) + " bytes");
          address = in.fixed(bytes);
          op_index = 0;
          const uint64_t all_ones = bytes >= 8 ? UINT64_MAX : (uint64_t{1} << (8 * bytes)) - 1;
          tombstoned = address == tombstone || address == all_ones;
        } else if (sub == kSetDiscriminator) {
          discriminator = static_cast<uint32_t>(in.uleb());
        }
        in.seek(next);  // also skips DW_LNE_define_file and unknown extended opcodes
        break;
      }
      case kCopy:
        emit(false);
        break;
      case kAdvancePc:
        advance(in.uleb());
        break;
      case kAdvanceLine:
        line += static_cast<uint64_t>(in.sleb());
        break;
      case kSetFile:
        in.uleb();
        break;
      case kSetColumn:
        in.uleb();
        break;
      case kNegateStmt:
        break;
      case kSetBasicBlock:
        break;
      case kConstAddPc:
        advance((255 - opcode_base) / line_range);
        break;
      case kFixedAdvancePc:
        address += in.fixed(2);
        op_index = 0;
        break;
      case kSetPrologueEnd:
        break;
      case kSetEpilogueBegin:
        break;
      case kSetIsa:
        in.uleb();
        break;
      default:
        for (unsigned i = 0; i < opcode_lengths[opcode - 1]; ++i) in.uleb();
        break;
    }
  }
  std::stable_sort(table.sequences_.begin(), table.sequences_.end(),
                   [](const Sequence& a, const Sequence& b) { return a.high < b.high; });
  return table;
}

DwarfLineTable DwarfLineTable::from_rows(const std::vector<LineRow>& rows) {
  DwarfLineTable table;
  for (const LineRow& row : rows) table.add_row(row);
  std::stable_sort(table.sequences_.begin(), table.sequences_.end(),
                   [](const Sequence& a, const Sequence& b) { return a.high < b.high; });
  return table;
}

std::optional<LineRow> DwarfLineTable::find(uint64_t address) const {
  // The first sequence ending above the address must also start at or below it.
  auto seq = std::upper_bound(sequences_.begin(), sequences_.end(), address,
                              [](uint64_t a, const Sequence& s) { return a < s.high; });
  if (seq == sequences_.end() || address < seq->low) return std::nullopt;
  auto first = rows_.begin() + static_cast<ptrdiff_t>(seq->first);
  auto last = rows_.begin() + static_cast<ptrdiff_t>(seq->last);
  auto row = std::upper_bound(first + 1, last - 1, address,
                              [](uint64_t a, const LineRow& r) { return a < r.address; });
  return *(row - 1);
}

}  // namespace profcollect
