// Draining an idle BPF hash map (bpf/hash_map_drain.h), by batches and key by key: every entry
// the kernel holds is passed on once with its value, and the map is left empty. The buffers
// start with one entry, so the batch read meets buckets that do not fit and must grow.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "bpf/hash_map_drain.h"
#include "bpf/sample_counter_abi.h"
#include "tests/integration/bpf_counter_support.h"

namespace profcollect::test {
namespace {

class BpfHashMapDrain : public ::testing::TestWithParam<HashMapDrainMode> {};

TEST_P(BpfHashMapDrain, PassesEveryEntryOnceAndLeavesTheMapEmpty) {
  if (auto reason = sample_counter_unavailable()) GTEST_SKIP() << *reason;
  constexpr uint32_t kEntries = 5000;
  const int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "drain_test", sizeof(profcollect_ip_key),
                                sizeof(uint64_t), 2 * kEntries, nullptr);
  ASSERT_GE(fd, 0) << -fd;
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> written;
  for (uint32_t i = 0; i < kEntries; ++i) {
    const profcollect_ip_key key{i % 7, 0, 0x400000 + 4ull * i};
    const uint64_t value = 1 + i * 3ull;
    ASSERT_EQ(bpf_map_update_elem(fd, &key, &value, BPF_NOEXIST), 0);
    written[{key.tgid, key.ip}] = value;
  }
  std::vector<profcollect_ip_key> keys(1);
  std::vector<uint64_t> values(1);
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> read;
  size_t emitted = 0;
  const int err =
      drain_hash_map(fd, GetParam(), keys, values, [&](const profcollect_ip_key& k, uint64_t v) {
        ++emitted;
        read[{k.tgid, k.ip}] = v;
      });
  ASSERT_EQ(err, 0);
  EXPECT_EQ(emitted, kEntries);  // no entry twice
  EXPECT_EQ(read, written);
  profcollect_ip_key first;
  EXPECT_EQ(bpf_map_get_next_key(fd, nullptr, &first), -ENOENT) << "the map is not empty";
  // A second drain of the empty map passes nothing.
  emitted = 0;
  EXPECT_EQ(drain_hash_map(fd, GetParam(), keys, values,
                           [&](const profcollect_ip_key&, uint64_t) { ++emitted; }),
            0);
  EXPECT_EQ(emitted, 0u);
  ::close(fd);
}

INSTANTIATE_TEST_SUITE_P(Modes, BpfHashMapDrain,
                         ::testing::Values(HashMapDrainMode::Batch, HashMapDrainMode::KeyWalk),
                         [](const auto& info) {
                           return info.param == HashMapDrainMode::Batch ? "Batch" : "KeyWalk";
                         });

}  // namespace
}  // namespace profcollect::test
