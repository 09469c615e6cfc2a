#include "collector/live/spe_pmu.h"

#include <algorithm>
#include <cstdlib>

namespace profcollect {

namespace {

bool parse_number(const std::optional<std::string>& text, uint64_t& out) {
  if (!text) return false;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text->c_str(), &end, 0);
  if (end == text->c_str()) return false;
  out = v;
  return true;
}

}  // namespace

std::vector<SpePmu> find_spe_pmus(const SystemFiles& files, std::vector<std::string>* probed) {
  const std::string devices = kEventSourceDevices;
  std::vector<std::string> names = files.list(devices);
  std::sort(names.begin(), names.end());
  std::vector<SpePmu> out;
  for (const std::string& name : names) {
    if (!name.starts_with("arm_spe_")) continue;
    SpePmu pmu;
    pmu.name = name;
    uint64_t type = 0;
    if (!parse_number(files.read(devices + "/" + name + "/type"), type) || type == 0 ||
        type > UINT32_MAX) {
      if (probed) probed->push_back(devices + "/" + name + "/type: unreadable");
      continue;
    }
    pmu.type = static_cast<uint32_t>(type);
    parse_number(files.read(devices + "/" + name + "/caps/min_interval"), pmu.min_interval);
    if (probed) {
      probed->push_back(devices + "/" + name + ": type " + std::to_string(pmu.type) +
                        ", min_interval " + std::to_string(pmu.min_interval));
    }
    out.push_back(pmu);
  }
  if (out.empty() && probed) probed->push_back(devices + ": no Arm SPE PMU (arm_spe_N)");
  return out;
}

perf_event_attr make_spe_attr(const SpePmu& pmu, const SpeAttrOptions& o) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = pmu.type;
  a.config = kSpeTsEnable | kSpeJitter;
  if (o.branches_only) a.config |= kSpeBranchFilter;
  if (o.privileged) a.config |= kSpePaEnable | kSpePctEnable;
  const uint64_t floor = pmu.min_interval ? pmu.min_interval : kDefaultSpeInterval;
  a.sample_period = std::max(o.period ? o.period : floor, floor);
  a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                  PERF_SAMPLE_CPU;
  a.disabled = 1;
  a.inherit = o.system_wide ? 0 : 1;
  a.exclude_kernel = o.include_kernel ? 0 : 1;
  a.exclude_hv = 1;
  a.exclude_guest = 1;
  a.sample_id_all = 1;
  return a;
}

}  // namespace profcollect
