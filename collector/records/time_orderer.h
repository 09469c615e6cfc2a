// Puts the records of one input in time order the way perf's ordered-events queue does.
//
// perf record writes the ring buffers of all CPUs one after the other, then a FINISHED_ROUND
// record. A record still to come has a time no earlier than the largest time of the round
// before the last one, so at each FINISHED_ROUND everything up to the previous round's maximum
// can go out in time order; the rest waits. At the end everything goes out.
//
// Records without a time (time 0 or none: synthesized records, attrs without sample_id_all)
// keep their place relative to their neighbours: they sort as if stamped with the largest time
// seen before them, after the records already queued with that time.
//
// Memory is one round of records (copied into an arena that is reused, never shrunk). Inputs
// without FINISHED_ROUND (old perf) would queue everything, so past `max_buffered_bytes` the
// older half is let out, as perf does when its queue is full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collector/records/raw_record_reader.h"

namespace profcollect {

class TimeOrderer {
 public:
  static constexpr size_t kDefaultMaxBufferedBytes = 64u << 20;

  explicit TimeOrderer(size_t max_buffered_bytes = kDefaultMaxBufferedBytes);

  // Queues a copy of `r` with its time (kNoTime or 0 when it has none). Call only when pop()
  // has nothing left: the copy may move the bytes of records returned before.
  void push(const RawRecord& r, uint64_t time);
  void finish_round();  // a FINISHED_ROUND record was read
  void finish_all();    // the input ended (or broke): everything is ready
  // Everything queued up to `time` is ready (the caller knows no earlier record is to come).
  void release_until(uint64_t time) { release_up_to(time); }

  // The next record in time order, valid until the next push() or pop(); false if none is
  // ready yet.
  bool pop(RawRecord& out);

  size_t queued() const { return pending_.size() + (ready_.size() - ready_pos_); }
  size_t buffered_bytes() const { return arena_used_; }

 private:
  struct Entry {
    uint64_t time;
    uint64_t seq;
    uint64_t offset;
    size_t arena_pos;
    uint32_t type;
    uint32_t stream;
    uint16_t misc;
    uint16_t size;
  };
  void sort_pending();
  void release_up_to(uint64_t limit);
  void release_half();
  void move_to_ready(size_t count);
  void compact();

  size_t max_buffered_bytes_;
  std::vector<uint8_t> arena_;
  std::vector<uint32_t> compact_order_;  // pending_ indices by arena position (reused)
  size_t arena_used_ = 0;
  std::vector<Entry> pending_;
  size_t sorted_ = 0;                 // pending_[0, sorted_) is in time order
  std::vector<Entry> merge_scratch_;  // reused by sort_pending()
  std::vector<Entry> ready_;
  size_t ready_pos_ = 0;
  bool released_ = false;  // records were let out since the last compaction
  uint64_t seq_ = 0;
  uint64_t max_time_ = 0;     // largest time queued so far
  uint64_t round_limit_ = 0;  // max_time_ at the previous FINISHED_ROUND
};

}  // namespace profcollect
