// The bounded hand-over between a collection's drain thread, which empties the kernel's buffers
// and does nothing else, and the session's thread, which decodes, resolves, aggregates and
// writes (collector/pipeline/drain_thread.h). The drain thread fills batches and publishes them; the
// session takes them in order and recycles them once processed. The lock is held only to move
// a pointer, so the drain thread never waits on the session's work.
//
// The bound is on the bytes held: published batches not yet recycled. The drain thread asks
// room() before it copies a record and leaves out what does not fit (counting it, by reason):
// the kernel's buffers are emptied whatever the session is doing, and the memory stays bounded.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace profcollect {

// Batch: memory_bytes(), capacity_bytes(), clear().
template <typename Batch>
class DrainBacklog {
 public:
  explicit DrainBacklog(size_t limit_bytes) : limit_(limit_bytes) {}

  size_t limit() const { return limit_; }
  // Bytes of the batches published and not yet recycled.
  size_t held_bytes() const { return held_.load(std::memory_order_relaxed); }
  // The largest held_bytes() seen.
  size_t peak_bytes() const { return peak_.load(std::memory_order_relaxed); }
  // What a batch being filled may still take, given that it holds `filling` bytes.
  size_t room(size_t filling) const {
    const size_t used = held_bytes() + filling;
    return used >= limit_ ? 0 : limit_ - used;
  }

  // Drain thread: an empty batch to fill (a recycled one when there is one).
  std::unique_ptr<Batch> acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!spare_.empty()) {
        std::unique_ptr<Batch> b = std::move(spare_.back());
        spare_.pop_back();
        return b;
      }
    }
    return std::make_unique<Batch>();
  }

  // Drain thread: hands a filled batch over to the session.
  void publish(std::unique_ptr<Batch> batch) {
    const size_t bytes = batch->memory_bytes();
    std::lock_guard<std::mutex> lock(mutex_);
    const size_t held = held_.load(std::memory_order_relaxed) + bytes;
    held_.store(held, std::memory_order_relaxed);
    if (held > peak_.load(std::memory_order_relaxed)) peak_.store(held, std::memory_order_relaxed);
    sizes_.push_back(bytes);
    queue_.push_back(std::move(batch));
  }

  // Drain thread: a batch it filled with nothing worth publishing.
  void give_back(std::unique_ptr<Batch> batch) { keep_spare(std::move(batch)); }

  // Session: the oldest published batch, or null.
  std::unique_ptr<Batch> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.empty()) return nullptr;
    std::unique_ptr<Batch> b = std::move(queue_.front());
    queue_.pop_front();
    taken_sizes_.push_back(sizes_.front());
    sizes_.pop_front();
    return b;
  }

  // Session: a batch it took and processed; its bytes no longer count. Batches are recycled in
  // the order they were taken.
  void recycle(std::unique_ptr<Batch> batch) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!taken_sizes_.empty()) {
        held_.store(held_.load(std::memory_order_relaxed) - taken_sizes_.front(),
                    std::memory_order_relaxed);
        taken_sizes_.pop_front();
      }
    }
    keep_spare(std::move(batch));
  }

  bool empty() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return queue_.empty();
  }

 private:
  void keep_spare(std::unique_ptr<Batch> batch) {
    batch->clear();
    // A few spares of ordinary size cover the batches in flight; more, or larger ones, would
    // only keep a burst's memory.
    if (batch->capacity_bytes() > limit_ / 8) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (spare_.size() < kSpares) spare_.push_back(std::move(batch));
  }

  static constexpr size_t kSpares = 4;
  const size_t limit_;
  mutable std::mutex mutex_;
  std::deque<std::unique_ptr<Batch>> queue_;
  std::deque<size_t> sizes_;        // of queue_'s batches, as published
  std::deque<size_t> taken_sizes_;  // of the batches taken and not yet recycled
  std::vector<std::unique_ptr<Batch>> spare_;
  std::atomic<size_t> held_{0};
  std::atomic<size_t> peak_{0};
};

}  // namespace profcollect
