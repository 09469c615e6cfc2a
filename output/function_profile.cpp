#include "output/function_profile.h"

#include <algorithm>
#include <map>

namespace profcollect {

FunctionProfile FunctionProfile::build(const IpProfile& ips, const SymbolTable& symbols,
                                       const BoltedBinary* bolted) {
  FunctionProfile p;
  p.samples.reserve(ips.counts().size());
  p.translated = bolted != nullptr && bolted->table() != nullptr;
  for (const auto& [vaddr, count] : ips.counts()) {
    if (p.translated) {
      const BatLocation at = bolted->locate(symbols, vaddr, false);
      if (at.function == nullptr) {
        p.unsymbolized += count;
        continue;
      }
      p.samples.push_back({at.named, at.offset, count});
      p.symbolized += count;
      if (at.fragment == nullptr) {
        p.translation.not_rewritten += count;
      } else {
        p.translation.translated += count;
        if (at.fragment->cold) p.translation.cold_fragments += count;
      }
      continue;
    }
    const FunctionSymbol* f = symbols.find(vaddr);
    if (!f) {
      p.unsymbolized += count;
      continue;
    }
    p.samples.push_back({f, vaddr - f->addr, count});
    p.symbolized += count;
  }
  std::sort(p.samples.begin(), p.samples.end(),
            [](const FunctionSample& a, const FunctionSample& b) {
              if (a.function->addr != b.function->addr) return a.function->addr < b.function->addr;
              if (a.function != b.function) return a.function->name < b.function->name;
              return a.offset < b.offset;
            });
  return p;
}

std::vector<FunctionTotal> FunctionProfile::totals() const {
  std::vector<FunctionTotal> out;
  for (const auto& s : samples) {
    if (!out.empty() && out.back().function == s.function) {
      out.back().count += s.count;
    } else {
      out.push_back({s.function, s.count});
    }
  }
  std::sort(out.begin(), out.end(), [](const FunctionTotal& a, const FunctionTotal& b) {
    if (a.count != b.count) return a.count > b.count;
    return a.function->name < b.function->name;
  });
  return out;
}

}  // namespace profcollect
