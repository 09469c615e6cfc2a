// A direct-mapped cache of a std::map's nodes by key, in front of a map of counts: a key counted
// again (most entries of a branch stack were counted in earlier stacks) is found by one hash and
// one compare instead of a descent of a dozen compares through the tree. std::map nodes stay
// where they are until erased, so a node's address stays good while the map only grows; whoever
// erases from the map or replaces it clears the cache. A copy or a move starts empty: the nodes
// it would point to are another map's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace profcollect {

// Hash: uint64_t operator()(const Map::key_type&) const, well mixed in its high bits.
template <class Map, class Hash>
class RecentMapNodes {
 public:
  RecentMapNodes() = default;
  RecentMapNodes(const RecentMapNodes&) {}
  RecentMapNodes(RecentMapNodes&&) noexcept {}
  RecentMapNodes& operator=(const RecentMapNodes&) {
    clear();
    return *this;
  }
  RecentMapNodes& operator=(RecentMapNodes&&) noexcept {
    clear();
    return *this;
  }

  // map[key], through the cache. Allocates the cache on first use, and a map node for a new key.
  typename Map::mapped_type& operator()(Map& map, const typename Map::key_type& key) {
    if (slots_) {
      const Slot& slot = slots_[Hash{}(key) >> (64 - kSlotBits)];
      if (slot.value != nullptr && slot.key == key) return *slot.value;
    }
    return miss(map, key);
  }

  void clear() { slots_.reset(); }

 private:
  // Apart from the hit path above, so that the hit path is inlined where it is used.
  [[gnu::noinline]] typename Map::mapped_type& miss(Map& map, const typename Map::key_type& key) {
    if (!slots_) slots_ = std::make_unique<Slot[]>(kSlots);
    Slot& slot = slots_[Hash{}(key) >> (64 - kSlotBits)];
    typename Map::mapped_type& value = map[key];
    slot.key = key;
    slot.value = &value;
    return value;
  }

  static constexpr unsigned kSlotBits = 12;
  static constexpr size_t kSlots = size_t{1} << kSlotBits;
  struct Slot {
    typename Map::key_type key{};
    typename Map::mapped_type* value = nullptr;
  };
  std::unique_ptr<Slot[]> slots_;
};

// A direct-mapped cache of answers that hold for a run of addresses (SymbolTable::FoundRun and
// the like: `begin`, `end`), by the address looked up. Copies start empty, as above.
template <class Run>
class RecentRuns {
 public:
  RecentRuns() = default;
  RecentRuns(const RecentRuns&) {}
  RecentRuns(RecentRuns&&) noexcept {}
  RecentRuns& operator=(const RecentRuns&) {
    runs_.reset();
    return *this;
  }
  RecentRuns& operator=(RecentRuns&&) noexcept {
    runs_.reset();
    return *this;
  }

  // The run holding `address`, found by `look_up(address)` when not cached.
  template <class LookUp>
  const Run& operator()(uint64_t address, LookUp&& look_up) {
    if (!runs_) runs_ = std::make_unique<Run[]>(kSlots);
    Run& run = runs_[(address * 0x9E3779B97F4A7C15ull) >> (64 - kSlotBits)];
    if (address - run.begin >= run.end - run.begin) run = look_up(address);
    return run;
  }

 private:
  static constexpr unsigned kSlotBits = 9;
  static constexpr size_t kSlots = size_t{1} << kSlotBits;
  std::unique_ptr<Run[]> runs_;
};

// A direct-mapped cache of answers by key (whether an address starts an instruction, whether a
// range may be counted): a key asked again is answered by one hash and one compare. Copies
// start empty, as above.
template <class Key, class Value, class Hash>
class RecentAnswers {
 public:
  RecentAnswers() = default;
  RecentAnswers(const RecentAnswers&) {}
  RecentAnswers(RecentAnswers&&) noexcept {}
  RecentAnswers& operator=(const RecentAnswers&) {
    slots_.reset();
    return *this;
  }
  RecentAnswers& operator=(RecentAnswers&&) noexcept {
    slots_.reset();
    return *this;
  }

  // The answer for `key`, given by `answer(key)` when not cached.
  template <class Answer>
  Value operator()(const Key& key, Answer&& answer) {
    if (slots_) {
      const Slot& slot = slots_[Hash{}(key) >> (64 - kSlotBits)];
      if (slot.filled && slot.key == key) return slot.value;
    }
    return miss(key, answer);
  }

 private:
  template <class Answer>
  [[gnu::noinline]] Value miss(const Key& key, Answer& answer) {
    if (!slots_) slots_ = std::make_unique<Slot[]>(kSlots);
    Slot& slot = slots_[Hash{}(key) >> (64 - kSlotBits)];
    slot.key = key;
    slot.value = answer(key);
    slot.filled = true;
    return slot.value;
  }

  static constexpr unsigned kSlotBits = 12;
  static constexpr size_t kSlots = size_t{1} << kSlotBits;
  struct Slot {
    Key key{};
    Value value{};
    bool filled = false;
  };
  std::unique_ptr<Slot[]> slots_;
};

// Mixes two 64-bit values and a few flag bits into a hash whose high bits are well spread.
inline uint64_t mix_hash(uint64_t a, uint64_t b, uint64_t flags = 0) {
  uint64_t h = a * 0x9E3779B97F4A7C15ull;
  h ^= (b + flags) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  return h * 0xBF58476D1CE4E5B9ull;
}

}  // namespace profcollect
