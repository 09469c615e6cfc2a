// The side-band split: the records that describe tasks and mappings (COMM, FORK/EXIT, MMAP2
// with build-ids) move from the sampling event to a software dummy event, as perf record does
// with its tracking event (perf 6.1 opens one for -a, -D and hybrid CPUs: `perf record -vv`
// shows "dummy:HG" or "dummy:u" with mmap, comm, task, mmap2, comm_exec, sample_id_all,
// sample_period 1, the sampling event keeping none of them).
//
// Why: an engine whose samples do not come through the ring buffer (the BPF engine counts them
// in a map) still needs the side-band records, so the sampling event must be able to go without
// them and the dummy to stand alone with its own buffers; and an event that carries nothing but
// samples is the same whatever carries the side-band.
//
// The dummy never samples (PERF_COUNT_SW_DUMMY counts nothing); it is opened on the same CPUs
// and threads, with the same inherit, enable_on_exec, clock and privilege levels as the sampling
// event, and writes its records into the same per-CPU buffers (PERF_EVENT_IOC_SET_OUTPUT, which
// the kernel refuses across clocks). Its sample_type carries the same sample_id_all trailer
// bits, PERF_SAMPLE_IDENTIFIER included, so that every record of a shared buffer is decoded
// with one trailer layout and attributed to its event by the id at the trailer's end.
#pragma once

#include <linux/perf_event.h>

namespace profcollect {

struct SideBandAttrs {
  perf_event_attr sampling;  // the sampling event without mmap/mmap2/comm/comm_exec/task/build_id
  perf_event_attr dummy;     // PERF_TYPE_SOFTWARE / PERF_COUNT_SW_DUMMY with them
};

// Splits a sampling attr (make_sampling_attr's, clock already chosen) into the two. Both get
// PERF_SAMPLE_IDENTIFIER, as perf sets it on every event when there are several.
SideBandAttrs split_side_band(const perf_event_attr& sampling);

// perf's name for its dummy event, with the sampling event's `:u` when the kernel is left out.
const char* dummy_event_name(const perf_event_attr& dummy);

}  // namespace profcollect
