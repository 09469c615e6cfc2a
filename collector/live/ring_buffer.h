// A perf ring buffer: the control page (struct perf_event_mmap_page) followed by a data area of
// 2^n pages the kernel writes records into.
//
// RingBuffer holds the reading protocol and works on any memory laid out like the kernel's, so
// tests drive it with a buffer in memory (tests/unit/ring_buffer_test.cpp):
//   begin_pass()  loads data_head with acquire ordering (the records before it are complete)
//   next()        yields the records up to that head; one that wraps around the end of the data
//                 area is copied, in two pieces, into a scratch buffer
//   end_pass()    stores data_tail with release ordering, after every read of the records: from
//                 then on the kernel may overwrite them
// The mapping must be writable: a read-only one puts the kernel in overwrite mode, where it
// never waits for data_tail.
//
// AuxBuffer reads an AUX area (the second mapping of an event whose PMU writes hardware trace:
// Arm SPE, Intel PT) by the same protocol on aux_head/aux_tail: begin_pass() loads aux_head with
// acquire ordering and gives the new bytes (two pieces when they wrap around the end of the
// area), end_pass() stores aux_tail with release ordering once they have been consumed. The
// kernel announces each piece it wrote with a PERF_RECORD_AUX in the data area (AuxRecord).
//
// MappedRingBuffer maps a perf event's buffer and owns the mapping; with aux_pages it also maps
// the AUX area, as perf does (tools/perf/util/auxtrace.c, the uapi's perf_event_mmap_page
// comment): aux_offset and aux_size are written into the control page after the data area is
// mapped, then the AUX area is mapped at aux_offset, read-write so that the kernel respects
// aux_tail (read-only would be overwrite, snapshot, mode). Only an AUX-capable PMU accepts it.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace profcollect {

class RingBuffer {
 public:
  // `data_size` must be a power of two; `data` is the data area, `control` the page before it.
  RingBuffer(perf_event_mmap_page* control, uint8_t* data, size_t data_size);

  // A whole mapping: the control page, then the data area (where data_offset/data_size in the
  // control page say, else right after the first page). Throws std::invalid_argument when the
  // control page places the area outside the mapping.
  static RingBuffer over_mapping(void* mapping, size_t mapping_size, size_t page_size);

  RingBuffer(RingBuffer&&) noexcept = default;
  RingBuffer& operator=(RingBuffer&&) noexcept = default;

  // Snapshots data_head; returns the bytes that can be read in this pass. A head more than the
  // data area ahead of the tail (or behind it) cannot be right: the pass starts at that head,
  // with nothing to read, and corrupt_heads() counts it.
  uint64_t begin_pass();

  // The next whole record (its perf_event_header included) up to the snapshot; valid until the
  // next call or end_pass(). False when the snapshot is consumed. A header that cannot be right
  // (size under 8 or past the head) makes the rest of the snapshot unreadable: it is skipped and
  // counted in skipped_bytes().
  bool next(std::span<const uint8_t>& record);

  // Gives the records returned so far back to the kernel. Records not yet returned stay for the
  // next pass.
  void end_pass();

  size_t data_size() const { return mask_ + 1; }
  uint64_t skipped_bytes() const { return skipped_bytes_; }
  uint64_t corrupt_heads() const { return corrupt_heads_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  perf_event_mmap_page* control_;
  const uint8_t* data_;
  size_t mask_;
  uint64_t head_ = 0;  // snapshot of data_head
  uint64_t tail_ = 0;  // end of the last record returned
  uint64_t skipped_bytes_ = 0;
  uint64_t corrupt_heads_ = 0;
  uint64_t bytes_read_ = 0;
  // Wrapped records are copied here: a record is at most 64 KiB (its size is a u16).
  std::unique_ptr<uint64_t[]> scratch_;
};

class AuxBuffer {
 public:
  // The new bytes of a pass: `first` up to the end of the area, then `second` from its start
  // when they wrap (empty otherwise). Both point into the area: valid until end_pass().
  struct Bytes {
    uint64_t offset = 0;  // stream position of the first byte (PERF_RECORD_AUX's aux_offset)
    std::span<const uint8_t> first;
    std::span<const uint8_t> second;
    uint64_t size() const { return first.size() + second.size(); }
  };

  // `size` must be a power of two (the kernel's AUX areas are 2^n pages); `area` is the AUX
  // mapping, `control` the event's control page.
  AuxBuffer(perf_event_mmap_page* control, const uint8_t* area, size_t size);

  // Snapshots aux_head; returns the bytes from aux_tail up to it. A head more than the area ahead
  // of the tail (or behind it) cannot be right: the pass starts at that head, with nothing to
  // read, and corrupt_heads() counts it.
  Bytes begin_pass();
  // The bytes of the stream range [offset, offset + size) (a PERF_RECORD_AUX's), if the pass
  // holds them all; empty otherwise.
  Bytes range(uint64_t offset, uint64_t size) const;
  // Gives every byte of the pass back to the kernel.
  void end_pass();

  // The live reading by PERF_RECORD_AUX (spe_live_reader.h), without a pass: the bytes a record
  // announced, [offset, offset + size), if they lie between aux_tail and one area further
  // (empty otherwise). The kernel writes the record after the bytes and publishes aux_head only
  // after the record (perf_aux_output_end), so a reader that has the record (data_head loaded
  // with acquire) may read its bytes although aux_head may not yet say so.
  Bytes announced(uint64_t offset, uint64_t size) const;
  // Gives the bytes up to stream position `end` back to the kernel (aux_tail, release store,
  // after every read of them). A position behind aux_tail or more than the area ahead is
  // refused (false): it cannot come from the kernel.
  bool release(uint64_t end);
  uint64_t tail() const { return tail_; }
  const perf_event_mmap_page& control() const { return *control_; }

  size_t size() const { return mask_ + 1; }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t corrupt_heads() const { return corrupt_heads_; }

 private:
  Bytes pieces(uint64_t offset, uint64_t size) const;

  perf_event_mmap_page* control_;
  const uint8_t* area_;
  size_t mask_;
  uint64_t head_ = 0;  // snapshot of aux_head
  uint64_t tail_ = 0;  // what the kernel has been given back
  uint64_t bytes_read_ = 0;
  uint64_t corrupt_heads_ = 0;
};

class MappedRingBuffer {
 public:
  // Maps 1 + data_pages pages of the event `fd` (not owned) read-write, and an AUX area of
  // aux_pages (a power of two) when not 0. Throws std::system_error with the errno of mmap
  // (EPERM: over the locked-memory limit; for the AUX area EOPNOTSUPP: the event's PMU writes
  // none), std::invalid_argument when aux_pages is not a power of two.
  MappedRingBuffer(int fd, uint32_t data_pages, uint32_t aux_pages = 0);
  ~MappedRingBuffer();
  MappedRingBuffer(const MappedRingBuffer&) = delete;
  MappedRingBuffer& operator=(const MappedRingBuffer&) = delete;

  int fd() const { return fd_; }
  RingBuffer& reader() { return *reader_; }
  bool has_aux() const { return aux_ != nullptr; }
  AuxBuffer& aux() { return *aux_; }

 private:
  void unmap();

  int fd_;
  void* mapping_ = nullptr;
  size_t size_ = 0;
  void* aux_mapping_ = nullptr;
  size_t aux_size_ = 0;
  std::unique_ptr<RingBuffer> reader_;
  std::unique_ptr<AuxBuffer> aux_;
};

}  // namespace profcollect
