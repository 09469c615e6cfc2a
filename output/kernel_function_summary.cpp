#include "output/kernel_function_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "output/text_lines.h"

namespace profcollect {

namespace {

void sort_summary(KernelFunctionSummary& s) {
  std::sort(s.functions.begin(), s.functions.end(),
            [](const KernelFunctionCount& a, const KernelFunctionCount& b) {
              return a.samples != b.samples ? a.samples > b.samples : a.name < b.name;
            });
  std::stable_sort(s.modules.begin(), s.modules.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
}

}  // namespace

KernelFunctionSummary summarize_kernel_functions(
    const std::unordered_map<uint64_t, uint64_t>& address_counts,
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
  out.modules.assign(per_module.begin(), per_module.end());
  sort_summary(out);
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

std::optional<KernelFunctionSummary> parse_kernel_functions(std::string_view text,
                                                            std::string* error) {
  KernelFunctionSummary out;
  TextLines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    if (line.empty()) continue;
    // Four fields, one space apart: kernel symbol and module names hold no spaces.
    std::string_view fields[4];
    size_t n = 0;
    for (size_t start = 0; start <= line.size() && n < 5;) {
      const size_t space = line.find(' ', start);
      const std::string_view field =
          line.substr(start, space == std::string_view::npos ? line.npos : space - start);
      if (n < 4) fields[n] = field;
      ++n;
      if (space == std::string_view::npos) break;
      start = space + 1;
    }
    KernelFunctionCount f;
    const std::string_view share = fields[1];
    if (n != 4 || !parse_whole_number(fields[0], 10, f.samples) || share.size() < 2 ||
        share.back() != '%' || fields[2].empty() || fields[3].empty()) {
      if (error)
        *error = "line " + std::to_string(lines.number()) +
                 ": expected '<count> <share>% <name> <module>'";
      return std::nullopt;
    }
    f.name = fields[2];
    if (fields[3] != "kernel") f.module = fields[3];
    out.functions.push_back(std::move(f));
  }
  return out;
}

void add_kernel_functions(KernelFunctionSummary& into, const KernelFunctionSummary& more) {
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (size_t i = 0; i < into.functions.size(); ++i)
    index[{into.functions[i].module, into.functions[i].name}] = i;
  for (const KernelFunctionCount& f : more.functions) {
    const auto [it, added] = index.try_emplace({f.module, f.name}, into.functions.size());
    if (added) {
      into.functions.push_back(f);
    } else {
      into.functions[it->second].samples += f.samples;
    }
  }
  std::map<std::string, uint64_t> modules(into.modules.begin(), into.modules.end());
  for (const auto& [name, count] : more.modules) modules[name] += count;
  into.modules.assign(modules.begin(), modules.end());
  into.samples += more.samples;
  into.unattributed += more.unattributed;
  for (KernelFunctionCount& f : into.functions) {
    f.share = into.samples ? static_cast<double>(f.samples) / static_cast<double>(into.samples) : 0;
  }
  sort_summary(into);
}

}  // namespace profcollect
