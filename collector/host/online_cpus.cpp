#include "collector/host/online_cpus.h"

#include <unistd.h>

#include <charconv>
#include <stdexcept>
#include <string>

#include "collector/host/proc_files.h"

namespace profcollect {

namespace {

int parse_cpu(std::string_view text, std::string_view whole) {
  int v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw std::invalid_argument("bad CPU list \"" + std::string(whole) + "\"");
  return v;
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view list) {
  const std::string_view whole = list;
  while (!list.empty() && (list.back() == '\n' || list.back() == ' ')) list.remove_suffix(1);
  std::vector<int> cpus;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (comma != std::string_view::npos && list.empty())
      throw std::invalid_argument("bad CPU list \"" + std::string(whole) + "\"");
    const size_t dash = item.find('-');
    const int first = parse_cpu(item.substr(0, dash), whole);
    const int last =
        dash == std::string_view::npos ? first : parse_cpu(item.substr(dash + 1), whole);
    if (last < first) throw std::invalid_argument("bad CPU list \"" + std::string(whole) + "\"");
    for (int c = first; c <= last; ++c) cpus.push_back(c);
  }
  if (cpus.empty()) throw std::invalid_argument("empty CPU list");
  return cpus;
}

std::vector<int> online_cpus() {
  std::string line;
  if (read_first_line("/sys/devices/system/cpu/online", line)) {
    try {
      return parse_cpu_list(line);
    } catch (const std::invalid_argument&) {
    }
  }
  std::vector<int> cpus;
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < (n > 0 ? n : 1); ++c) cpus.push_back(static_cast<int>(c));
  return cpus;
}

}  // namespace profcollect
