#include "collector/live/ring_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace profcollect {

namespace {

constexpr size_t kHeaderSize = sizeof(perf_event_header);
constexpr size_t kMaxRecordSize = 1u << 16;

}  // namespace

RingBuffer::RingBuffer(perf_event_mmap_page* control, uint8_t* data, size_t data_size)
    : control_(control),
      data_(data),
      mask_(data_size - 1),
      scratch_(new uint64_t[kMaxRecordSize / sizeof(uint64_t)]) {
  if (data_size < kHeaderSize || !std::has_single_bit(data_size))
    throw std::invalid_argument("ring buffer data size " + std::to_string(data_size) +
                                " is not a power of two");
  // Resume where a previous reader stopped (the kernel starts both at 0).
  tail_ = head_ = __atomic_load_n(&control_->data_tail, __ATOMIC_RELAXED);
}

RingBuffer RingBuffer::over_mapping(void* mapping, size_t mapping_size, size_t page_size) {
  auto* control = static_cast<perf_event_mmap_page*>(mapping);
  if (mapping_size < page_size)
    throw std::invalid_argument("ring buffer mapping smaller than its control page");
  uint64_t offset = page_size, size = mapping_size - page_size;
  // Linux 4.1+ says where the data area is; older kernels put it right after the first page.
  if (control->data_size != 0) {
    offset = control->data_offset;
    size = control->data_size;
  }
  if (offset < sizeof(perf_event_mmap_page) || offset > mapping_size ||
      size > mapping_size - offset)
    throw std::invalid_argument("ring buffer data area (offset " + std::to_string(offset) + ", " +
                                std::to_string(size) + " bytes) lies outside its " +
                                std::to_string(mapping_size) + "-byte mapping");
  return RingBuffer(control, static_cast<uint8_t*>(mapping) + offset, static_cast<size_t>(size));
}

uint64_t RingBuffer::begin_pass() {
  // Acquire: the record bytes the kernel wrote before publishing this head are visible to the
  // reads that follow (the kernel's smp_rmb() after reading data_head).
  head_ = __atomic_load_n(&control_->data_head, __ATOMIC_ACQUIRE);
  // The kernel never lets data_head run more than the data area ahead of data_tail. A head that
  // does (or that went back behind the tail) is a corrupt control page: nothing between tail
  // and head can be trusted, and reading it would wrap around the area several times. Count
  // it and start again from this head.
  if (head_ - tail_ > mask_ + 1) {
    ++corrupt_heads_;
    tail_ = head_;
  }
  return head_ - tail_;
}

bool RingBuffer::next(std::span<const uint8_t>& record) {
  const uint64_t available = head_ - tail_;
  if (available == 0) return false;
  const size_t pos = static_cast<size_t>(tail_) & mask_;
  // Records are 8-byte aligned in an area of 2^n pages, so a header never wraps; copy it anyway
  // so that a corrupt tail cannot make us read past the end.
  perf_event_header header;
  if (pos + kHeaderSize <= mask_ + 1) {
    std::memcpy(&header, data_ + pos, kHeaderSize);
  } else {
    const size_t first = mask_ + 1 - pos;
    std::memcpy(&header, data_ + pos, first);
    std::memcpy(reinterpret_cast<uint8_t*>(&header) + first, data_, kHeaderSize - first);
  }
  if (header.size < kHeaderSize || header.size > available) {
    skipped_bytes_ += available;
    tail_ = head_;
    return false;
  }
  const size_t size = header.size;
  if (pos + size <= mask_ + 1) {
    record = {data_ + pos, size};
  } else {
    auto* scratch = reinterpret_cast<uint8_t*>(scratch_.get());
    const size_t first = mask_ + 1 - pos;
    std::memcpy(scratch, data_ + pos, first);
    std::memcpy(scratch + first, data_, size - first);
    record = {scratch, size};
  }
  tail_ += size;
  bytes_read_ += size;
  return true;
}

void RingBuffer::end_pass() {
  // Release: every read of the records returned happens before the kernel may reuse their space
  // (the kernel's smp_mb() before writing data_tail).
  __atomic_store_n(&control_->data_tail, tail_, __ATOMIC_RELEASE);
}

AuxBuffer::AuxBuffer(perf_event_mmap_page* control, const uint8_t* area, size_t size)
    : control_(control), area_(area), mask_(size - 1) {
  if (size == 0 || !std::has_single_bit(size))
    throw std::invalid_argument("AUX area size " + std::to_string(size) + " is not a power of two");
  // Resume where a previous reader stopped (the kernel starts both at 0).
  tail_ = head_ = __atomic_load_n(&control_->aux_tail, __ATOMIC_RELAXED);
}

AuxBuffer::Bytes AuxBuffer::pieces(uint64_t offset, uint64_t size) const {
  Bytes b;
  b.offset = offset;
  const size_t pos = static_cast<size_t>(offset) & mask_;
  const size_t first = std::min<uint64_t>(size, mask_ + 1 - pos);
  b.first = {area_ + pos, first};
  if (size > first) b.second = {area_, static_cast<size_t>(size - first)};
  return b;
}

AuxBuffer::Bytes AuxBuffer::begin_pass() {
  // Acquire: the trace bytes the kernel wrote before publishing this head are visible to the
  // reads that follow (the rule the uapi gives aux_head: the same as data_head's).
  head_ = __atomic_load_n(&control_->aux_head, __ATOMIC_ACQUIRE);
  // Outside overwrite mode the kernel never runs aux_head more than the area ahead of aux_tail.
  if (head_ - tail_ > mask_ + 1) {
    ++corrupt_heads_;
    tail_ = head_;
  }
  bytes_read_ += head_ - tail_;
  return pieces(tail_, head_ - tail_);
}

AuxBuffer::Bytes AuxBuffer::range(uint64_t offset, uint64_t size) const {
  // Within [tail, head), counted without overflow.
  if (offset - tail_ > head_ - tail_ || size > head_ - offset) return Bytes{offset, {}, {}};
  return pieces(offset, size);
}

void AuxBuffer::end_pass() {
  // Release: every read of the pass's bytes happens before the kernel may write over them.
  tail_ = head_;
  __atomic_store_n(&control_->aux_tail, tail_, __ATOMIC_RELEASE);
}

AuxBuffer::Bytes AuxBuffer::announced(uint64_t offset, uint64_t size) const {
  // Counted from the tail without overflow: offset in [tail, tail + area), end within the area.
  if (offset - tail_ > mask_ + 1 || size > mask_ + 1 - (offset - tail_))
    return Bytes{offset, {}, {}};
  return pieces(offset, size);
}

bool AuxBuffer::release(uint64_t end) {
  if (end - tail_ > mask_ + 1) return false;
  bytes_read_ += end - tail_;
  tail_ = end;
  if (head_ - tail_ > mask_ + 1) head_ = tail_;  // a pass's snapshot never lags the tail
  // Release: every read of the bytes happens before the kernel may write over them.
  __atomic_store_n(&control_->aux_tail, tail_, __ATOMIC_RELEASE);
  return true;
}

MappedRingBuffer::MappedRingBuffer(int fd, uint32_t data_pages, uint32_t aux_pages) : fd_(fd) {
  if (aux_pages != 0 && !std::has_single_bit(aux_pages))
    throw std::invalid_argument("AUX area of " + std::to_string(aux_pages) +
                                " pages: the kernel takes a power of two");
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_ = (static_cast<size_t>(data_pages) + 1) * page;
  mapping_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    throw std::system_error(errno, std::generic_category(),
                            "mmap of a " + std::to_string(data_pages) + "-page perf ring buffer");
  }
  reader_ = std::make_unique<RingBuffer>(RingBuffer::over_mapping(mapping_, size_, page));
  if (aux_pages == 0) return;
  // The AUX area right after the data area, where the kernel wants it (aux_offset at least
  // data_offset + data_size) and perf puts it; the kernel reads both fields at the mmap.
  auto* control = static_cast<perf_event_mmap_page*>(mapping_);
  aux_size_ = static_cast<size_t>(aux_pages) * page;
  control->aux_offset = size_;
  control->aux_size = aux_size_;
  aux_mapping_ =
      ::mmap(nullptr, aux_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(size_));
  if (aux_mapping_ == MAP_FAILED) {
    const int err = errno;
    aux_mapping_ = nullptr;
    unmap();
    throw std::system_error(err, std::generic_category(),
                            "mmap of a " + std::to_string(aux_pages) + "-page AUX area");
  }
  aux_ = std::make_unique<AuxBuffer>(control, static_cast<const uint8_t*>(aux_mapping_), aux_size_);
}

void MappedRingBuffer::unmap() {
  // The AUX area first: the kernel ties it to the data area's mapping.
  if (aux_mapping_) ::munmap(aux_mapping_, aux_size_);
  if (mapping_) ::munmap(mapping_, size_);
  aux_mapping_ = mapping_ = nullptr;
}

MappedRingBuffer::~MappedRingBuffer() { unmap(); }

}  // namespace profcollect
