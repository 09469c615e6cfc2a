#include "collector/kernel/kallsyms.h"

#include <algorithm>
#include <cstdlib>

#include "collector/host/proc_files.h"
#include "collector/host/setting_error.h"

namespace profcollect {

namespace {

// The line's whitespace-separated words.
std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::optional<uint64_t> parse_hex(std::string_view s) {
  if (s.starts_with("0x")) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return std::nullopt;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  return v;
}

template <typename F>
void for_each_line(std::string_view text, F f) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

}  // namespace

KallsymsTable parse_kallsyms(std::string_view text) {
  KallsymsTable t;
  bool any_nonzero = false, any = false;
  for_each_line(text, [&](std::string_view line) {
    const std::vector<std::string_view> w = words(line);
    if (w.size() < 3 || w[1].size() != 1) return;
    const std::optional<uint64_t> address = parse_hex(w[0]);
    if (!address) return;
    any = true;
    if (*address) any_nonzero = true;
    const std::string_view name = w[2];
    if (w.size() == 3) {
      if (name == "_text")
        t.text = *address;
      else if (name == "_stext")
        t.stext = *address;
      else if (name == "_etext")
        t.etext = *address;
    }
    const char type = w[1][0];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') return;
    KernelSymbol s;
    s.address = *address;
    s.name = std::string(name);
    if (w.size() >= 4 && w[3].size() >= 2 && w[3].front() == '[' && w[3].back() == ']') {
      s.module = std::string(w[3].substr(1, w[3].size() - 2));
    }
    t.functions.push_back(std::move(s));
  });
  t.hidden = any && !any_nonzero;
  std::stable_sort(
      t.functions.begin(), t.functions.end(),
      [](const KernelSymbol& a, const KernelSymbol& b) { return a.address < b.address; });
  return t;
}

KallsymsTable read_kallsyms(const std::string& path) {
  std::string text;
  if (!read_whole_file(path, text)) throw SettingError("{kallsyms}: " + path + ": cannot be read");
  return parse_kallsyms(text);
}

std::vector<LoadedModule> parse_proc_modules(std::string_view text) {
  std::vector<LoadedModule> out;
  for_each_line(text, [&](std::string_view line) {
    const std::vector<std::string_view> w = words(line);
    if (w.size() < 6) return;
    LoadedModule m;
    m.name = std::string(w[0]);
    char* end = nullptr;
    const std::string size(w[1]);
    m.size = std::strtoull(size.c_str(), &end, 10);
    if (end == size.c_str() || *end) return;
    const std::optional<uint64_t> address = parse_hex(w[5]);
    if (!address) return;
    m.address = *address;
    out.push_back(std::move(m));
  });
  return out;
}

std::vector<LoadedModule> read_proc_modules(const std::string& path) {
  std::string text;
  if (!read_whole_file(path, text)) return {};
  return parse_proc_modules(text);
}

}  // namespace profcollect
