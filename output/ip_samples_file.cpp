#include "output/ip_samples_file.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "output/text_lines.h"

namespace profcollect {

std::string format_ip_samples(const IpProfile& ips) {
  std::vector<std::pair<uint64_t, uint64_t>> sorted(ips.counts().begin(), ips.counts().end());
  std::sort(sorted.begin(), sorted.end());
  std::string text;
  char buf[48];
  for (const auto& [address, count] : sorted) {
    const int n =
        std::snprintf(buf, sizeof buf, "%llx %llu\n", static_cast<unsigned long long>(address),
                      static_cast<unsigned long long>(count));
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

std::optional<IpProfile> parse_ip_samples(std::string_view text, std::string* error) {
  IpProfile ips;
  TextLines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    uint64_t address = 0, count = 0;
    if (space == std::string_view::npos ||
        !parse_whole_number(line.substr(0, space), 16, address) ||
        !parse_whole_number(line.substr(space + 1), 10, count)) {
      if (error)
        *error = "line " + std::to_string(lines.number()) + ": expected '<hex address> <count>'";
      return std::nullopt;
    }
    ips.add(address, count);
  }
  return ips;
}

}  // namespace profcollect
