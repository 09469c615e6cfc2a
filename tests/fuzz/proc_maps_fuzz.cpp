// Fuzz target: the text of /proc/PID/maps (collector/host/proc_maps.h), whose path names any user
// can choose (spaces, "\012", " (deleted)"). Every line that parses is a well-formed range.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/host/proc_maps.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profcollect;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const ProcMapsEntry& e : parse_proc_maps(text)) {
    if (e.end < e.start) __builtin_trap();
    fuzz::touch(e.path);
    e.executable();
  }
  return 0;
}
