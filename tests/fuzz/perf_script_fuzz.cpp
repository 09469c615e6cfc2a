// Fuzz target: `perf script -F ip,brstack --show-mmap-events` text (collector/input/perf_script_reader.h),
// every record fed to a process table. The only acceptable failures are OpenError and
// SourceError.
#include <cstddef>
#include <cstdint>

#include "collector/input/perf_script_reader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profcollect;
  const fuzz::MemoryFile file({data, size}, "perf.script");
  try {
    auto reader = PerfScriptReader::open(file.path());
    fuzz::consume_records(*reader);
    const PerfScriptStats& stats = reader->stats();
    // Every line is a sample, an MMAP line or skipped, nothing else.
    if (stats.samples + stats.mmaps + stats.skipped_lines > stats.lines) __builtin_trap();
  } catch (const OpenError&) {
  } catch (const SourceError&) {
  }
  return 0;
}
