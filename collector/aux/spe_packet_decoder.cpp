#include "collector/aux/spe_packet_decoder.h"

#include <cstring>

namespace profcollect::spe {
namespace {

constexpr uint8_t kHeaderPad = 0x00;
constexpr uint8_t kHeaderEnd = 0x01;
constexpr uint8_t kHeaderTimestamp = 0x71;
// Events and data source: 0b01SS0010 / 0b01SS0011 (SS: payload size).
constexpr uint8_t kMaskSized = 0xcf;
constexpr uint8_t kHeaderEvents = 0x42;
constexpr uint8_t kHeaderDataSource = 0x43;
// Context and operation type: 0b011001II / 0b010010CC.
constexpr uint8_t kMaskIndex2 = 0xfc;
constexpr uint8_t kHeaderContext = 0x64;
constexpr uint8_t kHeaderOperationType = 0x48;
constexpr uint8_t kHeaderExtendedPrefix = 0x20;  // 0b001000II, then a second header byte
// Address and counter: 0b10110III / 0b10011III (in the second byte of an extended header).
constexpr uint8_t kMaskIndex3 = 0xf8;
constexpr uint8_t kHeaderAddress = 0xb0;
constexpr uint8_t kHeaderCounter = 0x98;

// The payload size a header's bits [5:4] encode: 1, 2, 4 or 8 bytes.
uint8_t payload_size(uint8_t header) { return static_cast<uint8_t>(1U << ((header >> 4) & 3)); }

PacketStatus with_payload(std::span<const uint8_t> bytes, uint8_t header_size, uint8_t size_header,
                          Packet& out) {
  const uint8_t n = payload_size(size_header);
  if (bytes.size() < size_t{header_size} + n) return PacketStatus::kTruncated;
  uint64_t v = 0;
  for (uint8_t i = 0; i < n; ++i) v |= uint64_t{bytes[header_size + i]} << (8 * i);
  out.payload = v;
  out.size = static_cast<uint8_t>(header_size + n);
  return PacketStatus::kOk;
}

}  // namespace

PacketStatus read_packet(std::span<const uint8_t> bytes, Packet& out) {
  out = Packet{};
  if (bytes.empty()) return PacketStatus::kTruncated;
  const uint8_t h = bytes[0];
  if (h == kHeaderPad || h == kHeaderEnd) {
    out.kind = h == kHeaderPad ? PacketKind::kPad : PacketKind::kEnd;
    out.size = 1;
    return PacketStatus::kOk;
  }
  if (h == kHeaderTimestamp) {
    out.kind = PacketKind::kTimestamp;
    return with_payload(bytes, 1, h, out);
  }
  if ((h & kMaskSized) == kHeaderEvents || (h & kMaskSized) == kHeaderDataSource) {
    out.kind = (h & kMaskSized) == kHeaderEvents ? PacketKind::kEvents : PacketKind::kDataSource;
    return with_payload(bytes, 1, h, out);
  }
  if ((h & kMaskIndex2) == kHeaderContext || (h & kMaskIndex2) == kHeaderOperationType) {
    out.kind =
        (h & kMaskIndex2) == kHeaderContext ? PacketKind::kContext : PacketKind::kOperationType;
    out.index = h & 3;
    // Operation class 3 is reserved.
    if (out.kind == PacketKind::kOperationType && out.index == 3) return PacketStatus::kBadHeader;
    return with_payload(bytes, 1, h, out);
  }
  uint8_t second = h;
  uint8_t header_size = 1;
  uint8_t high_index = 0;
  if ((h & kMaskIndex2) == kHeaderExtendedPrefix) {
    if (bytes.size() < 2) return PacketStatus::kTruncated;
    second = bytes[1];
    if (second == 0) {
      out.kind = PacketKind::kAlignment;
      out.extended = true;
      out.size = 2;
      out.alignment = static_cast<uint8_t>(1U << ((h & 0xf) + 1));
      return PacketStatus::kOk;
    }
    header_size = 2;
    high_index = static_cast<uint8_t>((h & 3) << 3);
    out.extended = true;
  }
  if ((second & kMaskIndex3) == kHeaderAddress || (second & kMaskIndex3) == kHeaderCounter) {
    out.kind =
        (second & kMaskIndex3) == kHeaderAddress ? PacketKind::kAddress : PacketKind::kCounter;
    out.index = static_cast<uint8_t>(high_index | (second & 7));
    return with_payload(bytes, header_size, second, out);
  }
  return PacketStatus::kBadHeader;
}

uint64_t address_of(uint8_t index, uint64_t payload) {
  constexpr uint64_t kLow56 = (uint64_t{1} << 56) - 1;
  constexpr uint64_t kTopByte = uint64_t{0xff} << 56;
  const uint64_t address = payload & kLow56;
  switch (index) {
    case kAddressPc:
    case kAddressBranchTarget:
    case kAddressPreviousBranchTarget: {
      const uint8_t el = exception_level_of(payload);
      return non_secure_of(payload) && (el == 1 || el == 2) ? address | kTopByte : address;
    }
    case kAddressDataVirtual:
      return ((address >> 52) & 0xf) == 0xf ? address | kTopByte : address;
    default:
      return address;
  }
}

void SpePacketDecoder::apply(const Packet& p, Record& r) {
  switch (p.kind) {
    case PacketKind::kAddress:
      switch (p.index) {
        case kAddressPc:
          r.pc = address_of(p.index, p.payload);
          r.exception_level = exception_level_of(p.payload);
          r.has_pc = true;
          break;
        case kAddressBranchTarget:
          r.branch_target = address_of(p.index, p.payload);
          r.has_branch_target = true;
          break;
        case kAddressDataVirtual:
          r.data_virtual = address_of(p.index, p.payload);
          r.has_data_virtual = true;
          break;
        case kAddressDataPhysical:
          r.data_physical = address_of(p.index, p.payload);
          r.has_data_physical = true;
          break;
        default:
          break;  // previous branch target and later indexes: not used
      }
      break;
    case PacketKind::kCounter: {
      const auto v = static_cast<uint16_t>(p.payload);
      if (p.index == kCounterTotalLatency) r.total_latency = v;
      if (p.index == kCounterIssueLatency) r.issue_latency = v;
      if (p.index == kCounterTranslationLatency) r.translation_latency = v;
      break;
    }
    case PacketKind::kContext:
      r.context = static_cast<uint32_t>(p.payload);
      r.has_context = true;
      break;
    case PacketKind::kOperationType:
      r.operation = static_cast<OperationClass>(p.index);
      r.operation_subclass = static_cast<uint8_t>(p.payload);
      break;
    case PacketKind::kEvents:
      r.events |= static_cast<uint32_t>(p.payload);
      break;
    case PacketKind::kDataSource:
      r.data_source = p.payload;
      break;
    case PacketKind::kTimestamp:
      r.timestamp = p.payload;
      r.has_timestamp = true;
      break;
    default:
      break;
  }
}

bool SpePacketDecoder::next(Record& out) {
  out = Record{};
  bool started = false;  // a packet of the record in progress has been read
  size_t record_start = pos_;
  Packet p;
  while (pos_ < bytes_.size()) {
    const PacketStatus status = read_packet(bytes_.subspan(pos_), p);
    if (status == PacketStatus::kBadHeader) {
      if (started) ++counts_.records_dropped;
      started = false;
      out = Record{};
      ++counts_.bytes_skipped;
      ++pos_;
      continue;
    }
    if (status == PacketStatus::kTruncated) break;
    if (p.kind == PacketKind::kAlignment) {
      const size_t aligned = (pos_ + p.alignment) & ~size_t{p.alignment - 1U};
      if (aligned > bytes_.size()) break;
      pos_ = aligned;
      continue;
    }
    if (p.kind == PacketKind::kPad) {
      ++pos_;
      continue;
    }
    if (!started) {
      started = true;
      record_start = pos_;
    }
    pos_ += p.size;
    apply(p, out);
    if (p.kind == PacketKind::kEnd || p.kind == PacketKind::kTimestamp) {
      if (out.has_pc) {
        ++counts_.records;
        return true;
      }
      ++counts_.records_without_pc;
      started = false;
      out = Record{};
    }
  }
  // The end of the data: an unfinished record (and a packet cut short) is dropped.
  if (started) {
    ++counts_.records_dropped;
    counts_.bytes_truncated += bytes_.size() - record_start;
  } else if (pos_ < bytes_.size()) {  // cut inside the record's first packet
    ++counts_.records_dropped;
    counts_.bytes_truncated += bytes_.size() - pos_;
  }
  pos_ = bytes_.size();
  out = Record{};
  return false;
}

}  // namespace profcollect::spe
