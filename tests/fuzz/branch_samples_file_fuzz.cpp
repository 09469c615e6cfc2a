// Fuzz target: a samples.branch file as a profile directory's branch counts are read back between
// runs (output/branch_samples_file.h). Whatever parses must write back to text that parses and
// writes the same again.
#include <cstddef>
#include <cstdint>
#include <string>

#include "output/branch_samples_file.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profcollect;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto parsed = parse_branch_samples(text, &error);
  if (!parsed) {
    if (error.empty()) __builtin_trap();  // a refusal says why
    return 0;
  }
  const std::string written = format_branch_samples(*parsed);
  const auto again = parse_branch_samples(written, &error);
  if (!again || format_branch_samples(*again) != written) __builtin_trap();
  return 0;
}
