#include "output/unsymbolized_writer.h"

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <vector>

namespace profcollect {

namespace {

// llvm-profgen's ExternalAddr: what it writes (minus the base) for an end outside the binary.
constexpr uint64_t kProfgenExternalAddress = 1;

void append_hex(std::string& out, uint64_t value) {
  char buffer[20];
  const int n =
      std::snprintf(buffer, sizeof buffer, "%llx", static_cast<unsigned long long>(value));
  out.append(buffer, static_cast<size_t>(n));
}

// Entries in llvm-profgen's order: by the addresses it holds, its external address (1) first.
void append_section(std::string& out,
                    const std::map<std::pair<uint64_t, uint64_t>, uint64_t>& entries,
                    const char* separator, uint64_t base) {
  auto profgen_address = [](uint64_t a) {
    return a == kExternalAddress ? kProfgenExternalAddress : a;
  };
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> sorted;
  sorted.reserve(entries.size());
  for (const auto& [key, count] : entries) {
    sorted.emplace_back(profgen_address(key.first), profgen_address(key.second), count);
  }
  std::sort(sorted.begin(), sorted.end());
  out += std::to_string(sorted.size());
  out += '\n';
  for (const auto& [first, second, count] : sorted) {
    append_hex(out, first - base);
    out += separator;
    append_hex(out, second - base);
    out += ':';
    out += std::to_string(count);
    out += '\n';
  }
}

}  // namespace

std::string write_unsymbolized_profile(const RangeProfile& profile, uint64_t preferred_base) {
  std::string out;
  append_section(out, profile.ranges, "-", preferred_base);
  append_section(out, profile.branches, "->", preferred_base);
  return out;
}

const char* unsymbolized_kind_name(UnsymbolizedKind kind) {
  return kind == UnsymbolizedKind::IpSamples ? "ip-samples" : "branch-ranges";
}

const char* unsymbolized_profgen_flags(UnsymbolizedKind kind) {
  return kind == UnsymbolizedKind::IpSamples ? "--unsymbolized-profile=FILE --leading-ip-only"
                                             : "--unsymbolized-profile=FILE";
}

}  // namespace profcollect
