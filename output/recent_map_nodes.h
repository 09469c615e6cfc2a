// Direct-mapped caches in front of the branch counters' maps and questions: a key met again
// (most entries of a branch stack were met in earlier stacks) is answered by one hash and one
// compare instead of a descent of a dozen compares through a tree, or a look at the code.
//
// Each starts at 64 slots and doubles, up to 4096, as what it fronts grows (a map's keys, the
// misses of a question), so that an image with few branches keeps a few KB, not the full table:
// a daemon keeps one set per binary. A copy or a move starts empty: what it would point to is
// another's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace profcollect {

// The slots of one cache and its size, as a power of two between 2^6 and 2^12.
template <class Slot>
class CacheSlots {
 public:
  CacheSlots() = default;
  CacheSlots(const CacheSlots&) {}
  CacheSlots(CacheSlots&&) noexcept {}
  CacheSlots& operator=(const CacheSlots&) {
    clear();
    return *this;
  }
  CacheSlots& operator=(CacheSlots&&) noexcept {
    clear();
    return *this;
  }

  // The slot of a hash, or null before the first allocation.
  Slot* find(uint64_t hash) const { return slots_ ? &slots_[hash >> (64 - bits_)] : nullptr; }
  // The same, allocating the slots first (or again, empty and twice as many, when `wanted`
  // slots are more than there are and fewer than the most).
  Slot& at(uint64_t hash, size_t wanted) {
    if (!slots_ || (wanted > (size_t{1} << bits_) && bits_ < kMaxBits)) {
      bits_ = slots_ ? bits_ + 1 : kMinBits;
      slots_ = std::make_unique<Slot[]>(size_t{1} << bits_);
    }
    return slots_[hash >> (64 - bits_)];
  }
  size_t size() const { return slots_ ? size_t{1} << bits_ : 0; }
  void clear() { slots_.reset(); }

 private:
  static constexpr unsigned kMinBits = 6, kMaxBits = 12;
  std::unique_ptr<Slot[]> slots_;
  unsigned bits_ = kMinBits;
};

// The nodes of a std::map of counts by key. std::map nodes stay where they are until erased, so
// a node's address stays good while the map only grows; whoever erases from the map or replaces
// it clears the cache. Hash: uint64_t operator()(const Map::key_type&) const, well mixed in its
// high bits.
template <class Map, class Hash>
class RecentMapNodes {
 public:
  // map[key], through the cache; allocates a map node for a new key.
  typename Map::mapped_type& operator()(Map& map, const typename Map::key_type& key) {
    if (const Slot* slot = slots_.find(Hash{}(key));
        slot != nullptr && slot->value != nullptr && slot->key == key)
      return *slot->value;
    return miss(map, key);
  }

  void clear() { slots_.clear(); }

 private:
  struct Slot {
    typename Map::key_type key{};
    typename Map::mapped_type* value = nullptr;
  };

  // Apart from the hit path above, so that the hit path is inlined where it is used.
  [[gnu::noinline]] typename Map::mapped_type& miss(Map& map, const typename Map::key_type& key) {
    typename Map::mapped_type& value = map[key];
    Slot& slot = slots_.at(Hash{}(key), 2 * map.size());
    slot.key = key;
    slot.value = &value;
    return value;
  }

  CacheSlots<Slot> slots_;
};

// Answers by key (whether an address starts an instruction, whether a range may be counted).
template <class Key, class Value, class Hash>
class RecentAnswers {
 public:
  // The answer for `key`, given by `answer(key)` when not cached.
  template <class Answer>
  Value operator()(const Key& key, Answer&& answer) {
    if (const Slot* slot = slots_.find(Hash{}(key));
        slot != nullptr && slot->filled && slot->key == key)
      return slot->value;
    return miss(key, answer);
  }

 private:
  struct Slot {
    Key key{};
    Value value{};
    bool filled = false;
  };

  template <class Answer>
  [[gnu::noinline]] Value miss(const Key& key, Answer& answer) {
    // Grows each time as many questions missed as there are slots.
    const bool grow = ++misses_ > slots_.size();
    if (grow) misses_ = 0;
    Slot& slot = slots_.at(Hash{}(key), grow ? 2 * slots_.size() : 0);
    slot.key = key;
    slot.value = answer(key);
    slot.filled = true;
    return slot.value;
  }

  CacheSlots<Slot> slots_;
  size_t misses_ = 0;
};

// Answers that hold for a run of addresses (SymbolTable::FoundRun and the like: `begin`, `end`),
// by the address looked up: a run found for one address answers the others in it.
template <class Run>
class RecentRuns {
 public:
  // The run holding `address`, found by `look_up(address)` when not cached.
  template <class LookUp>
  const Run& operator()(uint64_t address, LookUp&& look_up) {
    const uint64_t hash = address * 0x9E3779B97F4A7C15ull;
    if (const Run* run = slots_.find(hash);
        run != nullptr && address - run->begin < run->end - run->begin)
      return *run;
    // Grows each time as many lookups missed as there are slots.
    const bool grow = ++misses_ > slots_.size();
    if (grow) misses_ = 0;
    Run& run = slots_.at(hash, grow ? 2 * slots_.size() : 0);
    run = look_up(address);
    return run;
  }

 private:
  CacheSlots<Run> slots_;
  size_t misses_ = 0;
};

// Mixes two 64-bit values and a few flag bits into a hash whose high bits are well spread.
inline uint64_t mix_hash(uint64_t a, uint64_t b, uint64_t flags = 0) {
  uint64_t h = a * 0x9E3779B97F4A7C15ull;
  h ^= (b + flags) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  return h * 0xBF58476D1CE4E5B9ull;
}

}  // namespace profcollect
