// A collection's drain thread: it waits on the engine's descriptors (readable when a ring
// buffer holds a wakeup's worth) and on a timer, and calls CollectionEngine::collect(), which
// moves what the kernel holds into the engine's bounded backlog. That is all it does: opening
// binaries, symbolizing, aggregating, rendering, fsync and the daemon's bookkeeping all happen on
// the session's thread, which can take seconds over a flush without the kernel's buffers filling
// meanwhile. The session's thread waits on ready_fd() (an eventfd, readable when collect() has
// published something) and then calls CollectionEngine::process().
//
// The thread blocks every signal (they go to the owner's thread) and names itself for top and
// perf ("profcollect-drn"). A collect() that throws ends the thread; the session's thread gets
// the exception from rethrow_if_failed().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <exception>
#include <mutex>
#include <thread>

namespace profcollect {

class CollectionEngine;

class DrainThread {
 public:
  // Starts the thread: collect() when a descriptor is readable, and at least every `interval`.
  DrainThread(CollectionEngine& engine, std::chrono::milliseconds interval);
  ~DrainThread();  // stop()
  DrainThread(const DrainThread&) = delete;
  DrainThread& operator=(const DrainThread&) = delete;

  // Ends the thread after its current pass and waits for it. Idempotent.
  void stop();

  // Waits until a pass that began after this call has ended (at most `patience`): what the
  // kernel held when a flush began is in the flush. False when the wait gave up (or the thread
  // ended).
  // `waiting`, when given, is called about every half second while it waits.
  bool sync(std::chrono::milliseconds patience, const std::function<void()>& waiting = nullptr);

  // Readable once collect() has published something since the last clear_ready().
  int ready_fd() const { return ready_fd_; }
  void clear_ready();
  // The exception a collect() threw, on the caller's thread.
  void rethrow_if_failed();

  uint64_t passes() const { return passes_.load(std::memory_order_relaxed); }

 private:
  void run();

  CollectionEngine& engine_;
  std::chrono::milliseconds interval_;
  int ready_fd_ = -1;
  int stop_fd_ = -1;
  int kick_fd_ = -1;  // readable: a sync() asks for a pass now
  std::atomic<uint64_t> passes_{0};
  std::mutex sync_mutex_;
  std::condition_variable synced_;
  uint64_t requested_ = 0, completed_ = 0;  // sync() requests, and the latest a pass served
  bool ended_ = false;
  std::mutex failure_mutex_;
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace profcollect
