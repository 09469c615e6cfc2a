#include "mapper/dwarf_function_index.h"

namespace profcollect {

void DwarfFunctionIndex::add(std::string_view name, std::span<const AddressRange> ranges) {
  if (ranges.empty()) return;
  auto [it, inserted] = by_name_.try_emplace(std::string(name), 0);
  if (inserted) {
    it->second = static_cast<uint32_t>(functions_.size());
    functions_.push_back(DwarfFunction{std::string(name), {}});
  }
  const uint32_t index = it->second;
  for (const AddressRange& range : ranges) {
    functions_[index].ranges.push_back(range);
    ranges_.try_emplace(range.begin, FunctionRange{range.begin, range.end, index});
  }
}

const FunctionRange* DwarfFunctionIndex::find(uint64_t address) const {
  auto it = ranges_.upper_bound(address);
  if (it == ranges_.begin()) return nullptr;
  --it;
  return address < it->second.end ? &it->second : nullptr;
}

const FunctionRange* DwarfFunctionIndex::starting_at(uint64_t address) const {
  auto it = ranges_.find(address);
  return it == ranges_.end() ? nullptr : &it->second;
}

}  // namespace profcollect
