// Reads and deletes every entry of a BPF hash map that nothing writes into meanwhile (a count
// map of the generation the sample counter retired). No lock is needed and no count can slip
// between the read and the delete, which is what loses counts when a live map is drained.
#pragma once

#include <bpf/bpf.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <vector>

namespace profcollect {

enum class HashMapDrainMode {
  Batch,    // BPF_MAP_LOOKUP_AND_DELETE_BATCH (Linux 5.6 and later)
  KeyWalk,  // get_next_key, then lookup and delete each key
};

// Passes every entry of the map `fd` to `emit(key, value)` and deletes it, reading
// `keys.size()` entries at a time into `keys` and `values`, which grow when a hash bucket holds
// more (a batch takes whole buckets) or the walk more keys, and are kept for the next drain.
// Returns 0, or the -errno of the call that failed; with Batch, a kernel without batch
// operations fails the first call with -EINVAL (unknown command) or -ENOTSUPP before anything
// is read, and the caller retries with KeyWalk.
template <typename Key, typename Value, typename Emit>
int drain_hash_map(int fd, HashMapDrainMode mode, std::vector<Key>& keys,
                   std::vector<Value>& values, Emit emit) {
  if (keys.empty()) keys.resize(64);
  values.resize(keys.size());
  if (mode == HashMapDrainMode::Batch) {
    // A hash map's batch position is a bucket index (u32); other maps use a key.
    alignas(8) unsigned char position[sizeof(Key) + sizeof(uint64_t)];
    void* in = nullptr;
    for (;;) {
      uint32_t count = static_cast<uint32_t>(keys.size());
      const int err = bpf_map_lookup_and_delete_batch(fd, in, position, keys.data(), values.data(),
                                                      &count, nullptr);
      if (err == -ENOSPC) {  // a bucket holds more than fits: count is its size
        keys.resize(std::max<size_t>(keys.size() * 2, count));
        values.resize(keys.size());
        continue;
      }
      if (err && err != -ENOENT) return err;
      for (uint32_t i = 0; i < std::min<size_t>(count, keys.size()); ++i) emit(keys[i], values[i]);
      if (err == -ENOENT) return 0;  // the last batch
      in = position;
    }
  }
  // The map does not change during the walk, so each key is met once.
  size_t found = 0;
  for (;;) {
    if (found == keys.size()) {
      keys.resize(keys.size() * 2);
      values.resize(keys.size());
    }
    const int err = bpf_map_get_next_key(fd, found ? &keys[found - 1] : nullptr, &keys[found]);
    if (err == -ENOENT) break;
    if (err) return err;
    ++found;
  }
  for (size_t i = 0; i < found; ++i) {
    if (const int err = bpf_map_lookup_elem(fd, &keys[i], &values[i]); err) return err;
    emit(keys[i], values[i]);
    if (const int err = bpf_map_delete_elem(fd, &keys[i]); err) return err;
  }
  return 0;
}

}  // namespace profcollect
