#include "collector/pipeline/recording_pipeline.h"

#include <chrono>

namespace profcollect {

void read_recording(RecordSource& source, SamplePipeline& pipeline,
                    const std::function<void(uint64_t, uint64_t)>& progress) {
  Record record;
  uint64_t n = 0;
  auto last_progress = std::chrono::steady_clock::now();
  try {
    while (source.next(record)) {
      pipeline.consume(record);
      if (progress && (++n & 0xffff) == 0) {
        auto now = std::chrono::steady_clock::now();
        if (now - last_progress > std::chrono::milliseconds(500)) {
          last_progress = now;
          progress(source.bytes_read(), source.bytes_total());
        }
      }
    }
  } catch (...) {
    pipeline.settle();
    throw;
  }
  pipeline.settle();
  if (progress) progress(source.bytes_read(), source.bytes_total());
}

}  // namespace profcollect
