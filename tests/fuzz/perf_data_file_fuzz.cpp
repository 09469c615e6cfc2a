// Fuzz target: a perf.data read from a regular file (collector/input/perf_data_reader.h) -- file mode,
// or pipe mode stored in a file -- through the time orderer and the record decoder, every record
// fed to a process table. The only acceptable failures are OpenError and SourceError.
#include <cstddef>
#include <cstdint>

#include "collector/input/perf_data_reader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profcollect;
  const fuzz::MemoryFile file({data, size}, "perf.data");
  try {
    auto source = open_perf_data(file.path());
    fuzz::consume_records(*source);
  } catch (const OpenError&) {
  } catch (const SourceError&) {
  }
  return 0;
}
