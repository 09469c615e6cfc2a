// Fuzz target: Arm SPE AUX data (collector/aux/spe_packet_decoder.h), which the hardware writes and a
// perf.data carries from any machine: truncated records, corrupt bytes, packets cut at the end.
// The decoder must resynchronise, account for every byte it skips or drops, return only records
// with a PC, and never read past the data.
#include <cstddef>
#include <cstdint>
#include <span>

#include "collector/aux/spe_packet_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profcollect::spe;
  SpePacketDecoder decoder(std::span<const uint8_t>(data, size));
  Record r;
  uint64_t records = 0;
  while (decoder.next(r)) {
    if (!r.has_pc) __builtin_trap();
    if (r.taken() && !r.is_branch()) __builtin_trap();
    ++records;
  }
  const DecodeCounts& c = decoder.counts();
  if (decoder.position() != size) __builtin_trap();
  if (c.records != records) __builtin_trap();
  if (c.bytes_skipped + c.bytes_truncated > size) __builtin_trap();
  if (decoder.next(r)) __builtin_trap();  // stays at the end
  // Packet by packet, every status is one of the three and a packet never claims bytes it lacks.
  Packet p;
  for (size_t at = 0; at < size;) {
    const PacketStatus s = read_packet(std::span<const uint8_t>(data + at, size - at), p);
    if (s == PacketStatus::kTruncated) break;
    if (s == PacketStatus::kOk && (p.size == 0 || p.size > size - at)) __builtin_trap();
    at += s == PacketStatus::kOk ? p.size : 1;
  }
  return 0;
}
