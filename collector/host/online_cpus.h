// The CPUs events are opened on: /sys/devices/system/cpu/online, a list like "0-3,6,8-11".
#pragma once

#include <string_view>
#include <vector>

namespace profcollect {

// Parses a kernel CPU list; throws std::invalid_argument on anything else.
std::vector<int> parse_cpu_list(std::string_view list);

// The online CPUs; falls back to 0..sysconf(_SC_NPROCESSORS_ONLN)-1 when sysfs is unreadable.
std::vector<int> online_cpus();

}  // namespace profcollect
