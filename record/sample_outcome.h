// What became of a sample: mapped into the target binary, or the named reason it was not.
// Every sample ends in exactly one of these, so a profile can say what it left out.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace profcollect {

enum class SampleOutcome : uint8_t {
  Mapped,
  OtherBinary,       // in a file mapping of another binary
  Kernel,            // kernel or module address
  AnonOrJit,         // anonymous memory, JIT code, heap, stack
  NoMapping,         // the process has no mapping at the address (or is unknown)
  NotExecutable,     // mapped from the binary, but outside its executable segments
  NoSymbol,          // in the binary's executable segments, but in no function symbol
  BuildIdMismatch,   // a file of the binary's name with another build-id
  UnreadableBinary,  // a selected binary whose file could not be opened or is not ELF
  // A user-mode sample of a process outside the collector's pid namespace: the kernel names it
  // pid 0 there (and its MMAP2 records too), so its address space cannot be known.
  OtherPidNamespace,
};
inline constexpr size_t kSampleOutcomeCount = 10;

constexpr std::string_view outcome_name(SampleOutcome o) {
  constexpr std::array<std::string_view, kSampleOutcomeCount> kNames = {"mapped",
                                                                        "other_binary",
                                                                        "kernel",
                                                                        "anon_or_jit",
                                                                        "no_mapping",
                                                                        "not_executable",
                                                                        "no_symbol",
                                                                        "build_id_mismatch",
                                                                        "unreadable_binary",
                                                                        "other_pid_namespace"};
  return kNames[static_cast<size_t>(o)];
}

// Counts per outcome, indexed by SampleOutcome.
struct OutcomeCounts {
  std::array<uint64_t, kSampleOutcomeCount> counts{};
  void add(SampleOutcome o, uint64_t n = 1) { counts[static_cast<size_t>(o)] += n; }
  uint64_t operator[](SampleOutcome o) const { return counts[static_cast<size_t>(o)]; }
  uint64_t total() const {
    uint64_t t = 0;
    for (auto c : counts) t += c;
    return t;
  }
};

}  // namespace profcollect
