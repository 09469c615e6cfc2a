#include "mapper/unit_address_ranges.h"

#include <algorithm>
#include <set>

namespace profcollect {

std::vector<UnitAddressRange> disjoint_unit_ranges(const std::vector<UnitAddressRange>& ranges) {
  struct Endpoint {
    uint64_t address;
    uint32_t unit;
    bool start;
  };
  std::vector<Endpoint> endpoints;
  endpoints.reserve(ranges.size() * 2);
  for (const UnitAddressRange& r : ranges) {
    if (r.begin >= r.end) continue;
    endpoints.push_back(Endpoint{r.begin, r.unit, true});
    endpoints.push_back(Endpoint{r.end, r.unit, false});
  }
  // Only the addresses order: the pieces are made between distinct addresses, after every end
  // and start at the earlier one is counted.
  std::sort(endpoints.begin(), endpoints.end(),
            [](const Endpoint& a, const Endpoint& b) { return a.address < b.address; });
  std::vector<UnitAddressRange> pieces;
  std::multiset<uint32_t> holding;
  uint64_t previous = 0;
  for (const Endpoint& e : endpoints) {
    if (previous < e.address && !holding.empty()) {
      if (!pieces.empty() && pieces.back().end == previous &&
          holding.contains(pieces.back().unit)) {
        pieces.back().end = e.address;
      } else {
        pieces.push_back(UnitAddressRange{previous, e.address, *holding.begin()});
      }
    }
    if (e.start) {
      holding.insert(e.unit);
    } else {
      holding.erase(holding.find(e.unit));
    }
    previous = e.address;
  }
  return pieces;
}

const UnitAddressRange* unit_range_holding(const std::vector<UnitAddressRange>& pieces,
                                           uint64_t address) {
  auto it = std::upper_bound(pieces.begin(), pieces.end(), address,
                             [](uint64_t a, const UnitAddressRange& r) { return a < r.begin; });
  if (it == pieces.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

}  // namespace profcollect
