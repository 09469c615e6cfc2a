// The Arm Statistical Profiling Extension's trace format (Arm ARM, "Statistical Profiling
// Extension" packet formats; the Linux decoder is tools/perf/util/arm-spe-decoder/): a stream of
// packets, each a one-byte header (or a two-byte "extended" header, prefix 0b001000xx) and a
// payload of 0, 1, 2, 4 or 8 bytes, little-endian. A record (one sampled operation) is the
// packets up to an END packet, or up to its TIMESTAMP packet, which then ends it.
//
// SpePacketDecoder turns an AUX-area byte range into records: the PC and its exception level,
// the operation class (branch, load/store, other), the branch target, and the events (taken is
// "a branch without the NOT-TAKEN event"; mispredicted is the MISPRED event). Bytes that are no
// packet (corrupt or truncated AUX data) are skipped one at a time to the next valid header and
// counted; the record they interrupted is dropped, never half-reported. Decoding allocates
// nothing: the caller owns the bytes and the record.
#pragma once

#include <cstdint>
#include <span>

namespace profcollect::spe {

enum class PacketKind : uint8_t {
  kPad,
  kEnd,
  kTimestamp,
  kAddress,
  kCounter,
  kContext,
  kOperationType,
  kEvents,
  kDataSource,
  kAlignment,  // extended header 0x2N 0x00: padding to the next 2^(N+1)-byte boundary
};

// Address packet indexes.
inline constexpr uint8_t kAddressPc = 0;
inline constexpr uint8_t kAddressBranchTarget = 1;
inline constexpr uint8_t kAddressDataVirtual = 2;
inline constexpr uint8_t kAddressDataPhysical = 3;
inline constexpr uint8_t kAddressPreviousBranchTarget = 4;

// Counter packet indexes.
inline constexpr uint8_t kCounterTotalLatency = 0;
inline constexpr uint8_t kCounterIssueLatency = 1;
inline constexpr uint8_t kCounterTranslationLatency = 2;

// Events packet bits.
inline constexpr uint32_t kEventExceptionGenerated = 1U << 0;
inline constexpr uint32_t kEventRetired = 1U << 1;
inline constexpr uint32_t kEventL1dAccess = 1U << 2;
inline constexpr uint32_t kEventL1dRefill = 1U << 3;
inline constexpr uint32_t kEventTlbAccess = 1U << 4;
inline constexpr uint32_t kEventTlbWalk = 1U << 5;
inline constexpr uint32_t kEventNotTaken = 1U << 6;
inline constexpr uint32_t kEventMispredicted = 1U << 7;
inline constexpr uint32_t kEventLlcAccess = 1U << 8;
inline constexpr uint32_t kEventLlcRefill = 1U << 9;
inline constexpr uint32_t kEventRemoteAccess = 1U << 10;
inline constexpr uint32_t kEventAlignment = 1U << 11;
inline constexpr uint32_t kEventSvePartialPredicate = 1U << 17;
inline constexpr uint32_t kEventSveEmptyPredicate = 1U << 18;

// The operation type packet's class (its header's low two bits).
enum class OperationClass : uint8_t { kOther = 0, kLoadStore = 1, kBranch = 2, kNone = 0xff };

// Branch operation payload bits.
inline constexpr uint8_t kBranchConditional = 1U << 0;
// Bits [7:1] = 0b0000001: an indirect branch.
inline constexpr bool is_indirect_branch(uint8_t subclass) { return (subclass & 0xfe) == 0x02; }

struct Packet {
  PacketKind kind = PacketKind::kPad;
  uint8_t index = 0;      // address/counter index, context index, operation class
  uint8_t size = 0;       // header + payload bytes (for kAlignment: the header only)
  bool extended = false;  // two-byte header
  uint8_t alignment = 0;  // kAlignment: the boundary, in bytes
  uint64_t payload = 0;
};

enum class PacketStatus : uint8_t { kOk, kBadHeader, kTruncated };

// Reads the packet at the start of `bytes` (no record state).
PacketStatus read_packet(std::span<const uint8_t> bytes, Packet& out);

// The address an address packet gives, as the CPU used it. PC and branch targets carry the
// exception level in bits [62:61] and the security state in bit 63 above a 56-bit address; at
// EL1/EL2 in the non-secure state the top byte of the address is all ones (kernel half). A data
// virtual address carries a top-byte tag in [63:56]: dropped, and refilled with ones when bits
// [55:52] are all ones. A physical address is bits [55:0].
uint64_t address_of(uint8_t index, uint64_t payload);
inline uint8_t exception_level_of(uint64_t payload) {
  return static_cast<uint8_t>((payload >> 61) & 3);
}
inline bool non_secure_of(uint64_t payload) { return (payload >> 63) != 0; }

struct Record {
  uint64_t pc = 0;
  uint64_t branch_target = 0;
  uint64_t data_virtual = 0;
  uint64_t data_physical = 0;
  uint64_t timestamp = 0;
  uint64_t data_source = 0;
  uint32_t context = 0;
  uint32_t events = 0;
  uint16_t total_latency = 0;
  uint16_t issue_latency = 0;
  uint16_t translation_latency = 0;
  uint8_t exception_level = 0;  // of the PC
  OperationClass operation = OperationClass::kNone;
  uint8_t operation_subclass = 0;  // the operation packet's payload
  bool has_pc = false;
  bool has_branch_target = false;
  bool has_data_virtual = false;
  bool has_data_physical = false;
  bool has_timestamp = false;
  bool has_context = false;

  bool is_branch() const { return operation == OperationClass::kBranch; }
  // A branch that was taken: the NOT-TAKEN event marks a conditional branch that fell through.
  bool taken() const { return is_branch() && (events & kEventNotTaken) == 0; }
  bool mispredicted() const { return (events & kEventMispredicted) != 0; }
};

struct DecodeCounts {
  uint64_t records = 0;             // records returned
  uint64_t records_without_pc = 0;  // complete records with no PC packet: not returned
  uint64_t records_dropped = 0;     // records cut by bad bytes or the end of the data
  uint64_t bytes_skipped = 0;       // bytes that were no valid packet
  uint64_t bytes_truncated = 0;     // bytes of an unfinished record at the end of the data
};

class SpePacketDecoder {
 public:
  explicit SpePacketDecoder(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  // The next complete record with a PC; false when the data is exhausted.
  bool next(Record& out);

  const DecodeCounts& counts() const { return counts_; }
  size_t position() const { return pos_; }

 private:
  void apply(const Packet& packet, Record& record);

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  DecodeCounts counts_;
};

}  // namespace profcollect::spe
