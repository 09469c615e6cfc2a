// Fuzz target: a no_lbr fdata file as a profile directory's bolt.fdata is read back between runs
// (output/fdata_reader.h). Whatever parses must write back to text that parses to the same
// profile.
#include <cstddef>
#include <cstdint>
#include <string>

#include "output/fdata_reader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profcollect;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto parsed = parse_no_lbr_fdata(text, &error);
  if (!parsed) {
    if (error.empty()) __builtin_trap();  // a refusal says why
    return 0;
  }
  const std::string written = format_no_lbr_fdata(*parsed);
  const auto again = parse_no_lbr_fdata(written, &error);
  if (!again || again->events != parsed->events || again->counts != parsed->counts)
    __builtin_trap();
  return 0;
}
