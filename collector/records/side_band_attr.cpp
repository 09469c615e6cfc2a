#include "collector/records/side_band_attr.h"

#include <cstdint>
#include <cstring>

#include "collector/records/perf_abi.h"

namespace profcollect {

SideBandAttrs split_side_band(const perf_event_attr& sampling) {
  SideBandAttrs out;
  out.sampling = sampling;
  out.sampling.sample_type |= PERF_SAMPLE_IDENTIFIER;
  out.sampling.mmap = 0;
  out.sampling.mmap2 = 0;
  out.sampling.mmap_data = 0;
  out.sampling.comm = 0;
  out.sampling.comm_exec = 0;
  out.sampling.task = 0;
  out.sampling.build_id = 0;

  perf_event_attr& d = out.dummy;
  std::memset(&d, 0, sizeof d);
  d.size = sizeof d;
  d.type = PERF_TYPE_SOFTWARE;
  d.config = PERF_COUNT_SW_DUMMY;
  d.sample_period = 1;  // as perf's; a dummy never overflows
  // The sampling event's trailer, and IP, which perf's dummy keeps.
  d.sample_type = (sampling.sample_type & (perf_abi::kSampleIdTrailerBits | PERF_SAMPLE_IP)) |
                  PERF_SAMPLE_IDENTIFIER;
  d.sample_id_all = 1;
  d.mmap = sampling.mmap;
  d.mmap2 = sampling.mmap2;
  d.mmap_data = sampling.mmap_data;
  d.comm = sampling.comm;
  d.comm_exec = sampling.comm_exec;
  d.task = sampling.task;
  d.build_id = sampling.build_id;
  // The kernel checks exclude_kernel against perf_event_paranoid for a dummy too; the levels do
  // not filter side-band records, so the sampling event's are taken (user mappings come either way).
  d.exclude_kernel = sampling.exclude_kernel;
  d.exclude_hv = sampling.exclude_hv;
  d.exclude_guest = sampling.exclude_guest;
  d.disabled = sampling.disabled;
  d.inherit = sampling.inherit;
  d.enable_on_exec = sampling.enable_on_exec;
  d.use_clockid = sampling.use_clockid;
  d.clockid = sampling.clockid;
  return out;
}

const char* dummy_event_name(const perf_event_attr& dummy) {
  return dummy.exclude_kernel ? "dummy:u" : "dummy";
}

}  // namespace profcollect
