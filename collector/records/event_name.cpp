#include "collector/records/event_name.h"

#include <cinttypes>
#include <cstdio>

#include "collector/records/perf_abi.h"
#include "record/hex_text.h"

namespace profcollect {

namespace abi = perf_abi;

namespace {

constexpr const char* kHardwareNames[] = {
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
    "bus-cycles",
    "stalled-cycles-frontend",
    "stalled-cycles-backend",
    "ref-cycles",
};
constexpr const char* kSoftwareNames[] = {
    "cpu-clock",        "task-clock",   "page-faults",  "context-switches",
    "cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
    "emulation-faults", "dummy",        "bpf-output",   "cgroup-switches",
};
constexpr const char* kCacheNames[] = {"L1-dcache", "L1-icache", "LLC", "dTLB",
                                       "iTLB",      "branch",    "node"};
// Singular with a result ("L1-dcache-load-misses"), plural without ("L1-dcache-loads").
constexpr const char* kCacheOps[][2] = {
    {"load", "loads"}, {"store", "stores"}, {"prefetch", "prefetches"}};
constexpr const char* kCacheResults[] = {"refs", "misses"};

// Which (cache, op) pairs exist, as perf's evsel__hw_cache_stat: bit per op.
constexpr unsigned kLoad = 1, kStore = 2, kPrefetch = 4;
constexpr unsigned kCacheOpsValid[] = {
    kLoad | kStore | kPrefetch,  // L1-dcache
    kLoad | kPrefetch,           // L1-icache
    kLoad | kStore | kPrefetch,  // LLC
    kLoad | kStore | kPrefetch,  // dTLB
    kLoad,                       // iTLB
    kLoad,                       // branch
    kLoad | kStore | kPrefetch,  // node
};

// perf's ":ukhppp HG" suffix: the privilege levels counted when some are excluded, the precise
// level, and host/guest when they differ from perf's default for that kind of event.
std::string modifiers(const PerfAttr& a) {
  const bool ex_user = a.flags & abi::kAttrFlagExcludeUser;
  const bool ex_kernel = a.flags & abi::kAttrFlagExcludeKernel;
  const bool ex_hv = a.flags & abi::kAttrFlagExcludeHv;
  const bool ex_host = a.flags & abi::kAttrFlagExcludeHost;
  const bool ex_guest = a.flags & abi::kAttrFlagExcludeGuest;
  std::string m;
  bool exclude_guest_default = false;
  if (ex_kernel || ex_user || ex_hv) {
    if (!ex_kernel) m += 'k';
    if (!ex_user) m += 'u';
    if (!ex_hv) m += 'h';
    exclude_guest_default = true;
  }
  if (a.precise_ip()) {
    m.append(a.precise_ip(), 'p');
    exclude_guest_default = true;
  }
  if (ex_host || ex_guest == exclude_guest_default) {
    if (!ex_host) m += 'H';
    if (!ex_guest) m += 'G';
  }
  return m.empty() ? m : ":" + m;
}

std::string cache_name(uint64_t config) {
  const uint64_t type = config & 0xff, op = (config >> 8) & 0xff, result = (config >> 16) & 0xff;
  if (type >= std::size(kCacheNames) || op >= std::size(kCacheOps) ||
      result >= std::size(kCacheResults) || !(kCacheOpsValid[type] & (1u << op)))
    return "invalid-cache";
  std::string name = std::string(kCacheNames[type]) + "-";
  if (result) return name + kCacheOps[op][0] + "-" + kCacheResults[result];
  return name + kCacheOps[op][1];
}

}  // namespace

std::string perf_event_name(const PerfAttr& a) {
  const uint64_t config = a.event.config;
  switch (a.event.type) {
    case abi::kTypeHardware:
      return (config < std::size(kHardwareNames) ? kHardwareNames[config] : "unknown-hardware") +
             modifiers(a);
    case abi::kTypeSoftware:
      return (config < std::size(kSoftwareNames) ? kSoftwareNames[config] : "unknown-software") +
             modifiers(a);
    case abi::kTypeHwCache:
      return cache_name(config) + modifiers(a);
    case abi::kTypeRaw:
      return "raw " + hex_address(config) + modifiers(a);
    case abi::kTypeTracepoint:
      return "unknown tracepoint";
    case abi::kTypeBreakpoint: {
      std::string name = "mem:" + hex_address(a.bp_addr) + ":";
      if (a.bp_type & 1) name += 'r';
      if (a.bp_type & 2) name += 'w';
      if (a.bp_type & 4) name += 'x';
      return name + modifiers(a);
    }
    default:
      return "unknown attr type: " + std::to_string(a.event.type);
  }
}

}  // namespace profcollect
