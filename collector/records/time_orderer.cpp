#include "collector/records/time_orderer.h"

#include <algorithm>
#include <cstring>

#include "record/record.h"

namespace profcollect {

namespace {
size_t align8(size_t n) { return (n + 7) & ~size_t{7}; }
}  // namespace

TimeOrderer::TimeOrderer(size_t max_buffered_bytes) : max_buffered_bytes_(max_buffered_bytes) {}

void TimeOrderer::compact() {
  // Only pending records are alive: slide them to the front of the arena in arena order, so
  // each moves down over dead bytes or itself, never over one not yet moved. In place: a second
  // arena would double the memory of a full queue.
  compact_order_.clear();
  for (uint32_t i = 0; i < pending_.size(); ++i) compact_order_.push_back(i);
  std::sort(compact_order_.begin(), compact_order_.end(), [this](uint32_t a, uint32_t b) {
    return pending_[a].arena_pos < pending_[b].arena_pos;
  });
  size_t used = 0;
  for (uint32_t i : compact_order_) {
    Entry& e = pending_[i];
    std::memmove(arena_.data() + used, arena_.data() + e.arena_pos, e.size);
    e.arena_pos = used;
    used += align8(e.size);
  }
  arena_used_ = used;
}

void TimeOrderer::push(const RawRecord& r, uint64_t time) {
  if (released_ && ready_pos_ == ready_.size()) {
    // Everything let out so far has been consumed: its bytes are dead.
    ready_.clear();
    ready_pos_ = 0;
    compact();
    released_ = false;
  }
  const bool timed = time != 0 && time != kNoTime;
  if (timed) max_time_ = std::max(max_time_, time);
  const size_t size = r.bytes.size();
  if (arena_.size() - arena_used_ < size) {
    // Past the limit half the queue goes out at once, so the limit and one more record (64 KiB
    // at most) is all the arena ever needs unless the consumer holds records back. Reserved
    // once (untouched pages cost no memory): growing by copying would hold the old and the new
    // arena at once.
    const size_t limit = max_buffered_bytes_ + (64u << 10) + 8;
    if (arena_.capacity() < limit) arena_.reserve(limit);
    size_t grown = std::max(arena_.size() * 2, arena_used_ + (64u << 10));
    arena_.resize(std::min(grown, std::max(limit, arena_used_ + size)));
  }
  std::memcpy(arena_.data() + arena_used_, r.bytes.data(), size);
  pending_.push_back(Entry{timed ? time : max_time_, seq_++, r.offset, arena_used_, r.type,
                           r.stream, r.misc, static_cast<uint16_t>(size)});
  arena_used_ += align8(size);
  if (arena_used_ > max_buffered_bytes_ && ready_pos_ == ready_.size()) release_half();
}

void TimeOrderer::move_to_ready(size_t count) {
  // pending_ is sorted; its first `count` entries go out, after what is still ready.
  ready_.erase(ready_.begin(), ready_.begin() + static_cast<ptrdiff_t>(ready_pos_));
  ready_pos_ = 0;
  ready_.insert(ready_.end(), pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(count));
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(count));
  sorted_ -= count;
  if (count) released_ = true;
}

void TimeOrderer::sort_pending() {
  // What an earlier sort left (the records held back at the last round) is sorted already: only
  // the records queued since are sorted, then the two runs merged.
  auto less = [](const Entry& a, const Entry& b) {
    return a.time != b.time ? a.time < b.time : a.seq < b.seq;
  };
  const auto mid = pending_.begin() + static_cast<ptrdiff_t>(sorted_);
  if (!std::is_sorted(mid, pending_.end(), less)) std::sort(mid, pending_.end(), less);
  if (sorted_ > 0 && mid != pending_.end() && less(*mid, *(mid - 1))) {
    merge_scratch_.resize(pending_.size());
    std::merge(pending_.begin(), mid, mid, pending_.end(), merge_scratch_.begin(), less);
    pending_.swap(merge_scratch_);
  }
  sorted_ = pending_.size();
}

void TimeOrderer::release_up_to(uint64_t limit) {
  sort_pending();
  auto end = std::partition_point(pending_.begin(), pending_.end(),
                                  [limit](const Entry& e) { return e.time <= limit; });
  move_to_ready(static_cast<size_t>(end - pending_.begin()));
}

void TimeOrderer::release_half() {
  sort_pending();
  move_to_ready(std::max<size_t>(1, pending_.size() / 2));
}

void TimeOrderer::finish_round() {
  release_up_to(round_limit_);
  round_limit_ = max_time_;
}

void TimeOrderer::finish_all() { release_up_to(UINT64_MAX); }

bool TimeOrderer::pop(RawRecord& out) {
  if (ready_pos_ == ready_.size()) return false;
  const Entry& e = ready_[ready_pos_++];
  out.type = e.type;
  out.misc = e.misc;
  out.bytes = {arena_.data() + e.arena_pos, e.size};
  out.offset = e.offset;
  out.stream = e.stream;
  return true;
}

}  // namespace profcollect
