// A whole recording (perf.data or perf script text) through the sample pipeline: what convert
// and report share, so that both count alike.
#pragma once

#include <cstdint>
#include <functional>

#include "collector/records/record_source.h"
#include "collector/pipeline/sample_pipeline.h"

namespace profcollect {

// Reads `source` to its end into `pipeline`, then settles the pipeline. progress, when set, is
// called now and then with (bytes read, bytes total). Throws SourceError on damage; the
// pipeline then holds (settled) everything read before it.
void read_recording(RecordSource& source, SamplePipeline& pipeline,
                    const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace profcollect
