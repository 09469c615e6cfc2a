// Fuzz target: the live path over plain memory -- a perf ring buffer laid out as the kernel's
// mapping (tests/unit/fake_ring_buffer.h), read by RingBuffer (collector/live/ring_buffer.h) into
// LiveRecordSource (collector/live/live_record_source.h): record decoding with the attr's layout,
// the time orderer, loss and throttle counting. The input plays the kernel: it picks the data
// area's size, the attr, where data_head and data_tail start, and then, pass after pass, writes
// bytes at the head (published or not yet), moves data_head anywhere (a corrupt control page),
// or queues synthesized records. The only acceptable failure is std::invalid_argument from a control page that puts
// the data area outside the mapping; after that no exception is: a live source must survive
// whatever the buffer holds.
#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>

#include "collector/live/live_record_source.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/unit/fake_ring_buffer.h"

namespace {

using namespace profcollect;

// Takes fields from the front of the input; zeros once it runs out.
class InputReader {
 public:
  InputReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ == size_; }
  template <typename T>
  T take() {
    T v{};
    const size_t n = std::min(sizeof v, size_ - pos_);
    std::memcpy(&v, data_ + pos_, n);
    pos_ += n;
    return v;
  }
  std::span<const uint8_t> bytes(size_t n) {
    n = std::min(n, size_ - pos_);
    std::span<const uint8_t> s(data_ + pos_, n);
    pos_ += n;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_, pos_ = 0;
};

// Everything ready now, read whole.
void take_ready(LiveRecordSource& source) {
  Record r;
  while (source.next(r)) {
    if (const auto* s = std::get_if<SampleRecord>(&r)) {
      fuzz::touch(s->branches);
    } else if (const auto* m = std::get_if<MmapRecord>(&r)) {
      fuzz::touch(m->filename);
    } else if (const auto* c = std::get_if<CommRecord>(&r)) {
      fuzz::touch(c->comm);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  InputReader in(data, size);
  const size_t data_size = size_t{64} << (in.take<uint8_t>() % 8);  // 64 B to 8 KiB
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.sample_type = in.take<uint64_t>() & ((uint64_t{1} << 25) - 1);  // every field perf knows
  attr.read_format = in.take<uint8_t>() & 0x1f;
  attr.branch_sample_type = in.take<uint32_t>();
  attr.sample_regs_user = in.take<uint64_t>();
  attr.sample_regs_intr = in.take<uint64_t>();
  const auto attr_flags = in.take<uint8_t>();
  attr.sample_id_all = attr_flags & 1;

  test::FakeRingBuffer fake(data_size);
  if (attr_flags & 2) {  // the control page's own word on where the data area is
    fake.control()->data_offset = in.take<uint16_t>();
    fake.control()->data_size = in.take<uint16_t>();
  }
  const auto start = in.take<uint64_t>();
  fake.start_at(start);
  uint64_t head = start;
  std::optional<RingBuffer> rb;
  try {
    rb.emplace(fake.reader());
  } catch (const std::invalid_argument&) {
    return 0;  // an area outside the mapping, or not a power of two: refused before any read
  }
  LiveRecordSource source(attr, {}, {&*rb}, "cpu-clock");

  for (int pass = 0; pass < 64 && !in.empty(); ++pass) {
    const auto op = in.take<uint8_t>();
    const auto length = static_cast<size_t>(in.take<uint16_t>() % (data_size + 1));
    switch (op % 4) {
      case 0:
      case 1: {  // the kernel writes records at the head, and publishes them (0) or not yet (1)
        const std::span<const uint8_t> bytes = in.bytes(length);
        for (size_t i = 0; i < bytes.size(); ++i)
          fake.data()[(head + i) & (data_size - 1)] = bytes[i];
        head += bytes.size();
        if (op % 4 == 0) __atomic_store_n(&fake.control()->data_head, head, __ATOMIC_RELEASE);
        break;
      }
      case 2:  // data_head anywhere: behind the tail, or more than the area ahead of it
        head = in.take<uint64_t>();
        __atomic_store_n(&fake.control()->data_head, head, __ATOMIC_RELEASE);
        break;
      case 3:  // records synthesized from /proc, or by another synthesizer
        source.add_synthesized(in.bytes(length));
        break;
    }
    source.drain();
    take_ready(source);
    // The reader never takes more than the kernel published, nor more than the area holds.
    const LiveCounters& c = source.counters();
    if (c.bytes > rb->data_size() * static_cast<uint64_t>(pass + 1)) __builtin_trap();
  }
  source.finish();
  take_ready(source);
  return 0;
}
