#include "collector/host/setting_error.h"

#include <array>
#include <utility>

namespace profcollect {

namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kNames = {{
    {"event", "event"},
    {"frequency", "frequency"},
    {"period", "period"},
    {"branch_any", "any-branch stack"},
    {"branch_filter", "branch filter"},
    {"mmap_pages", "buffer pages"},
    {"binaries", "binaries"},
    {"output_dir", "output directory"},
    {"vmlinux", "kernel image"},
    {"kallsyms", "kernel symbol table"},
    {"engine", "engine"},
    {"format", "format"},
}};

}  // namespace

std::string spell_settings(std::string_view text, const SettingSpelling& spelling) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t open = text.find('{');
    if (open == std::string_view::npos) break;
    const size_t close = text.find('}', open);
    if (close == std::string_view::npos) break;
    const std::string_view name = text.substr(open + 1, close - open - 1);
    std::string_view known;
    for (const auto& [setting, own] : kNames) {
      if (setting == name) known = own;
    }
    out.append(text.substr(0, open));
    if (known.empty()) {
      out.append(text.substr(open, close - open + 1));  // not a setting: kept as written
    } else {
      std::string spelled = spelling ? spelling(name) : std::string();
      out.append(spelled.empty() ? std::string(known) : spelled);
    }
    text.remove_prefix(close + 1);
  }
  out.append(text);
  return out;
}

}  // namespace profcollect
