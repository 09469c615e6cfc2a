// A perf ring buffer in ordinary memory, laid out as the kernel lays out the mapping (control
// page, then a data area of 2^n bytes), with a writer that follows the kernel's side of the
// protocol: records are copied in at data_head (wrapping around the end), data_head is then
// published with release ordering, and a record that does not fit before data_tail is refused
// (the kernel would count it in a PERF_RECORD_LOST).
//
// FakeAuxArea is the same for an AUX area: a control page, then the area of 2^n bytes; bytes
// are copied in at aux_head (wrapping), aux_head is published with release ordering, and bytes
// that do not fit before aux_tail are refused (the kernel would mark its PERF_RECORD_AUX
// TRUNCATED).
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "collector/live/ring_buffer.h"

namespace profcollect::test {

class FakeRingBuffer {
 public:
  static constexpr size_t kPage = 4096;

  explicit FakeRingBuffer(size_t data_size, bool fill_data_fields = true)
      : data_size_(data_size), memory_((kPage + data_size) / 8, 0) {
    if (fill_data_fields) {
      control()->data_offset = kPage;
      control()->data_size = data_size;
    }
  }

  perf_event_mmap_page* control() {
    return reinterpret_cast<perf_event_mmap_page*>(memory_.data());
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(memory_.data()) + kPage; }
  void* mapping() { return memory_.data(); }
  size_t mapping_size() const { return kPage + data_size_; }

  RingBuffer reader() { return RingBuffer::over_mapping(mapping(), mapping_size(), kPage); }

  uint64_t head() { return __atomic_load_n(&control()->data_head, __ATOMIC_RELAXED); }
  uint64_t tail() { return __atomic_load_n(&control()->data_tail, __ATOMIC_ACQUIRE); }

  // Starts the buffer at an arbitrary position, as after a long run (both head and tail there).
  void start_at(uint64_t position) {
    control()->data_head = position;
    control()->data_tail = position;
    pending_ = position;
  }

  // Copies the record in and publishes it; false when it does not fit before the tail.
  bool write(std::span<const uint8_t> record) {
    if (!write_unpublished(record)) return false;
    publish();
    return true;
  }
  // Copies the record in without moving data_head (the kernel publishes after the whole record).
  bool write_unpublished(std::span<const uint8_t> record) {
    if (pending_ + record.size() - tail() > data_size_) return false;
    for (size_t i = 0; i < record.size(); ++i)
      data()[(pending_ + i) & (data_size_ - 1)] = record[i];
    pending_ += record.size();
    return true;
  }
  void publish() { __atomic_store_n(&control()->data_head, pending_, __ATOMIC_RELEASE); }

 private:
  size_t data_size_;
  std::vector<uint64_t> memory_;  // 8-byte aligned, like the page-aligned mapping
  uint64_t pending_ = 0;          // where the next record goes; data_head lags until publish()
};

class FakeAuxArea {
 public:
  static constexpr size_t kPage = 4096;

  explicit FakeAuxArea(size_t size) : size_(size), control_(kPage / 8, 0), area_(size / 8 + 1, 0) {
    control()->aux_offset = kPage;
    control()->aux_size = size;
  }

  perf_event_mmap_page* control() {
    return reinterpret_cast<perf_event_mmap_page*>(control_.data());
  }
  uint8_t* area() { return reinterpret_cast<uint8_t*>(area_.data()); }
  AuxBuffer reader() { return AuxBuffer(control(), area(), size_); }

  uint64_t head() { return __atomic_load_n(&control()->aux_head, __ATOMIC_RELAXED); }
  uint64_t tail() { return __atomic_load_n(&control()->aux_tail, __ATOMIC_ACQUIRE); }

  void start_at(uint64_t position) {
    control()->aux_head = position;
    control()->aux_tail = position;
    pending_ = position;
  }

  // Copies the bytes in and publishes them; false when they do not fit before the tail.
  bool write(std::span<const uint8_t> bytes) {
    if (pending_ + bytes.size() - tail() > size_) return false;
    for (size_t i = 0; i < bytes.size(); ++i) area()[(pending_ + i) & (size_ - 1)] = bytes[i];
    pending_ += bytes.size();
    __atomic_store_n(&control()->aux_head, pending_, __ATOMIC_RELEASE);
    return true;
  }

 private:
  size_t size_;
  std::vector<uint64_t> control_;  // the control page, 8-byte aligned like the mapping
  std::vector<uint64_t> area_;
  uint64_t pending_ = 0;
};

}  // namespace profcollect::test
