#include "collector/records/perf_session_state.h"

#include <algorithm>
#include <bit>

#include "collector/records/event_name.h"
#include "collector/records/perf_abi.h"

namespace profcollect {

namespace abi = perf_abi;

namespace {

uint32_t trailer_size(uint64_t st) {
  uint32_t words = 0;
  for (uint64_t bit : {abi::kSampleTid, abi::kSampleTime, abi::kSampleId, abi::kSampleStreamId,
                       abi::kSampleCpu, abi::kSampleIdentifier})
    if (st & bit) ++words;
  return words * 8;
}

}  // namespace

uint32_t PerfSessionState::add_attr(const PerfAttr& attr, std::span<const uint64_t> ids) {
  const auto index = static_cast<uint32_t>(layouts_.size());
  EventAttr event = attr.event;
  event.name = perf_event_name(attr);
  event.ids.clear();
  info_.attrs.push_back(std::move(event));

  SampleLayout l;
  l.sample_type = attr.event.sample_type;
  l.read_format = attr.event.read_format;
  l.branch_sample_type = attr.event.branch_sample_type;
  l.default_period = attr.event.sample_period_or_freq;
  l.regs_user_words = static_cast<uint32_t>(std::popcount(attr.sample_regs_user));
  l.regs_intr_words = static_cast<uint32_t>(std::popcount(attr.sample_regs_intr));
  l.sample_id_all = attr.event.sample_id_all;
  l.trailer_bytes = l.sample_id_all ? trailer_size(l.sample_type) : 0;
  layouts_.push_back(l);
  named_.push_back(false);

  for (uint64_t id : ids) add_id(index, id);
  if (index == 0) update_id_positions();
  return index;
}

void PerfSessionState::add_id(uint32_t attr_index, uint64_t id) {
  if (attr_index >= layouts_.size()) return;
  auto [it, inserted] = attr_by_id_.emplace(id, attr_index);
  if (inserted) info_.attrs[attr_index].ids.push_back(id);
}

void PerfSessionState::update_id_positions() {
  const uint64_t st = layouts_[0].sample_type;
  sample_id_word_ = -1;
  trailer_id_word_from_end_ = -1;
  if (st & abi::kSampleIdentifier) {
    sample_id_word_ = 0;
    trailer_id_word_from_end_ = 1;
  } else if (st & abi::kSampleId) {
    int w = 0;
    for (uint64_t bit : {abi::kSampleIp, abi::kSampleTid, abi::kSampleTime, abi::kSampleAddr})
      if (st & bit) ++w;
    sample_id_word_ = w;
    int from_end = 1;
    for (uint64_t bit : {abi::kSampleStreamId, abi::kSampleCpu})
      if (st & bit) ++from_end;
    trailer_id_word_from_end_ = from_end;
  }
}

uint32_t PerfSessionState::attr_of_id(uint64_t id) const {
  if (id == 0) return 0;
  auto it = attr_by_id_.find(id);
  return it == attr_by_id_.end() ? kUnknownAttr : it->second;
}

uint32_t PerfSessionState::attr_of_sample(std::span<const uint8_t> record) const {
  if (layouts_.size() <= 1) return layouts_.empty() ? kUnknownAttr : 0;
  if (sample_id_word_ < 0) return 0;
  const size_t at = abi::kEventHeaderSize + 8 * static_cast<size_t>(sample_id_word_);
  if (record.size() < at + 8) return 0;  // the decoder reports the short record
  return attr_of_id(abi::load<uint64_t>(record.data() + at));
}

uint32_t PerfSessionState::attr_of_non_sample(std::span<const uint8_t> record) const {
  if (layouts_.size() <= 1) return layouts_.empty() ? kUnknownAttr : 0;
  if (!layouts_[0].sample_id_all || trailer_id_word_from_end_ < 0) return 0;
  const size_t back = 8 * static_cast<size_t>(trailer_id_word_from_end_);
  if (record.size() < abi::kEventHeaderSize + back) return 0;
  uint32_t a = attr_of_id(abi::load<uint64_t>(record.data() + record.size() - back));
  // perf requires all attrs to share the trailer layout, so an unknown id still parses with the
  // first attr's layout.
  return a == kUnknownAttr ? 0 : a;
}

void PerfSessionState::name_by_desc(uint64_t id, std::string_view name) {
  uint32_t a = layouts_.size() == 1 ? 0 : attr_of_id(id);
  if (a == kUnknownAttr || a >= layouts_.size() || named_[a] || name.empty()) return;
  info_.attrs[a].name = name;
  named_[a] = true;
}

void PerfSessionState::name_by_update(uint64_t id, std::string_view name) {
  uint32_t a = layouts_.size() == 1 ? 0 : attr_of_id(id);
  if (a == kUnknownAttr || a >= layouts_.size() || name.empty()) return;
  info_.attrs[a].name = name;
  named_[a] = true;
}

void PerfSessionState::add_build_id(BuildIdEntry entry) {
  std::string key =
      entry.build_id.to_hex() + '\0' + std::to_string(entry.pid) + '\0' + entry.filename;
  if (!build_id_keys_.insert(std::move(key)).second) return;
  info_.build_ids.push_back(std::move(entry));
}

}  // namespace profcollect
