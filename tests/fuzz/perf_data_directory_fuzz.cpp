// Fuzz target: a `perf record --threads` directory (collector/input/perf_data_reader.h): the input's
// first part (tests/fuzz/fuzz_support.h, kPartSeparator) is DIR/data, the header file, and each
// further part is DIR/data.N, the bare records of one recording thread, merged by time
// (collector/input/merged_record_source.h). The only acceptable failures are OpenError and
// SourceError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "collector/input/perf_data_reader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profcollect;
  const auto& dir = fuzz::ScratchDirectory::get();
  const auto parts = fuzz::split_parts(data, size);
  // More readers than this only repeat what a few show, and each costs a 1 MiB buffer.
  constexpr size_t kMaxParts = 9;
  dir.write("data", parts[0]);
  for (size_t i = 1; i < parts.size() && i < kMaxParts; ++i)
    dir.write("data." + std::to_string(i - 1), parts[i]);
  try {
    auto source = open_perf_data(dir.path());
    fuzz::consume_records(*source);
  } catch (const OpenError&) {
  } catch (const SourceError&) {
  }
  dir.clear();
  return 0;
}
