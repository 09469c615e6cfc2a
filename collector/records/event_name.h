// The name perf gives an event whose perf.data carries none (no event-desc feature, no
// EVENT_UPDATE record): "cycles", "cpu-clock", "cycles:ppH", "L1-dcache-load-misses",
// "raw 0xc4", ... This follows perf 6.1's evsel__name(), the judge our tests compare with
// (perf script prints these names).
#pragma once

#include <string>

#include "collector/records/perf_attr.h"

namespace profcollect {

std::string perf_event_name(const PerfAttr& attr);

}  // namespace profcollect
