// What the reader knows about a recording while reading it: the attrs with their sample layout,
// which attr a sample id belongs to, event names, build-ids and the strings of the header. File
// mode fills it from the header before the first record; pipe mode fills it from the metadata
// records as they come (see header_records.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collector/records/perf_attr.h"
#include "collector/records/record_source.h"

namespace profcollect {

// The per-attr facts that decide how its records are laid out.
struct SampleLayout {
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t branch_sample_type = 0;
  uint64_t default_period = 0;   // attr.sample_period, what perf reports without PERIOD
  uint32_t regs_user_words = 0;  // popcount(sample_regs_user)
  uint32_t regs_intr_words = 0;
  uint32_t trailer_bytes = 0;  // size of the sample_id_all trailer of non-sample records
  bool sample_id_all = false;
};

class PerfSessionState {
 public:
  static constexpr uint32_t kUnknownAttr = UINT32_MAX;

  const SessionInfo& info() const { return info_; }
  SessionInfo& info() { return info_; }
  size_t attr_count() const { return layouts_.size(); }
  const SampleLayout& layout(uint32_t attr_index) const { return layouts_[attr_index]; }

  uint32_t add_attr(const PerfAttr& attr, std::span<const uint64_t> ids);
  void add_id(uint32_t attr_index, uint64_t id);

  // The attr of a record, as perf's evlist__event2evsel() finds it: the only attr; the first
  // when the id is 0 (synthesized records) or cannot be located; else by id, kUnknownAttr when
  // the id belongs to no attr.
  uint32_t attr_of_sample(std::span<const uint8_t> record) const;
  uint32_t attr_of_non_sample(std::span<const uint8_t> record) const;

  // Names from the event-desc feature apply only to attrs not named yet (perf keeps the first);
  // EVENT_UPDATE names replace. `id` 0 means the first attr, like perf.
  void name_by_desc(uint64_t id, std::string_view name);
  void name_by_update(uint64_t id, std::string_view name);

  // Adds a build-id unless the same (file, id, pid) is known already.
  void add_build_id(BuildIdEntry entry);

 private:
  uint32_t attr_of_id(uint64_t id) const;
  void update_id_positions();

  SessionInfo info_;
  std::vector<SampleLayout> layouts_;
  std::vector<bool> named_;  // name given by the file, not derived
  std::unordered_map<uint64_t, uint32_t> attr_by_id_;
  // Where the id sits, from the first attr (perf requires every attr to agree): index of the
  // u64 in a sample's body, and index counted from the end of a non-sample record; -1 if none.
  int sample_id_word_ = -1;
  int trailer_id_word_from_end_ = -1;
  std::unordered_set<std::string> build_id_keys_;
};

}  // namespace profcollect
