#include "output/kernel_function_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace profcollect {

KernelFunctionSummary summarize_kernel_functions(const std::unordered_map<uint64_t, uint64_t>& address_counts,
                                                 const std::vector<KernelSymbol>& symbols, uint64_t text_end,
                                                 const std::vector<ModuleRange>& module_ranges) {
  KernelFunctionSummary out;
  std::vector<uint64_t> per_symbol(symbols.size(), 0);
  std::map<std::string, uint64_t> per_module;
  for (const auto& [address, count] : address_counts) {
    out.samples += count;
    const ModuleRange* in_module = nullptr;
    for (const ModuleRange& m : module_ranges) {
      if (address >= m.start && address < m.end) in_module = &m;
    }
    auto it = std::upper_bound(symbols.begin(), symbols.end(), address,
                               [](uint64_t a, const KernelSymbol& s) { return a < s.address; });
    if (it == symbols.begin()) {
      out.unattributed += count;
      continue;
    }
    const size_t index = static_cast<size_t>(it - symbols.begin()) - 1;
    const KernelSymbol& s = symbols[index];
    // An address is given to the symbol below it only within the same image: the image's text
    // for kernel symbols, the module's memory for a module's.
    const bool same_image = in_module ? s.module == in_module->name
                                      : s.module.empty() && (text_end == 0 || address < text_end);
    if (!same_image) {
      out.unattributed += count;
      if (in_module) per_module[in_module->name] += count;
      continue;
    }
    per_symbol[index] += count;
    if (!s.module.empty()) per_module[s.module] += count;
  }
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (!per_symbol[i]) continue;
    KernelFunctionCount f;
    f.name = symbols[i].name;
    f.module = symbols[i].module;
    f.samples = per_symbol[i];
    f.share = static_cast<double>(f.samples) / static_cast<double>(out.samples);
    out.functions.push_back(std::move(f));
  }
  std::sort(out.functions.begin(), out.functions.end(), [](const KernelFunctionCount& a, const KernelFunctionCount& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.name < b.name;
  });
  out.modules.assign(per_module.begin(), per_module.end());
  std::stable_sort(out.modules.begin(), out.modules.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::string render_kernel_functions(const KernelFunctionSummary& summary) {
  std::string out;
  char share[32];
  for (const KernelFunctionCount& f : summary.functions) {
    std::snprintf(share, sizeof share, "%.2f%%", 100.0 * f.share);
    out += std::to_string(f.samples) + ' ' + share + ' ' + f.name + ' ' +
           (f.module.empty() ? std::string("kernel") : f.module) + '\n';
  }
  return out;
}

}  // namespace profcollect
