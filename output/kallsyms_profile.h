// The running kernel's profile when no vmlinux with debug info is at hand (the kallsyms route of
// collector/kernel/kernel_collection.h), as its directory keeps it:
//
//   autofdo.unsym   llvm-profgen's unsymbolized profile of the kernel image's IP samples, as
//                   offsets from the runtime _text (output/unsymbolized_writer.h)
//   functions.txt   samples per function by /proc/kallsyms (output/kernel_function_summary.h)
//   samples.ip      the kernel image's samples by offset from the runtime _text, one
//                   "<hex offset> <count>" a line (output/ip_samples_file.h)
//   meta.json       what the directory holds, how to finish it, and the totals functions.txt
//                   leaves out: kernel_samples, unattributed, modules, first/last_sample_ns
//
// Cumulative: KASLR moves _text and nothing else of the image, so offsets from it are the same
// at every boot of one kernel build, and the directory is named by that build's id; a later run
// reads the directory back (parse_kallsyms_profile) and adds to it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "output/ip_profile.h"
#include "output/kernel_function_summary.h"

namespace profcollect {

struct KallsymsProfile {
  IpProfile text_offsets;           // the kernel image's samples, by offset from _text
  KernelFunctionSummary functions;  // every kernel sample, modules' included
  uint64_t first_sample_ns = 0, last_sample_ns = 0;  // Unix epoch; 0 before any sample
};

struct KallsymsProfileLabels {
  std::string build_id;  // the running kernel's
  std::string event;
};

void add_kallsyms_profile(KallsymsProfile& into, const KallsymsProfile& more);

// The directory's files, (name, content).
std::vector<std::pair<std::string, std::string>> render_kallsyms_profile(
    const KallsymsProfile& profile, const KallsymsProfileLabels& labels);

// The profile render_kallsyms_profile wrote, from its samples.ip, functions.txt and meta.json;
// nullopt with `error` naming the file and the reason when one is damaged or the files' counts
// disagree.
std::optional<KallsymsProfile> parse_kallsyms_profile(std::string_view samples_ip,
                                                      std::string_view functions,
                                                      std::string_view meta_json,
                                                      std::string* error);

}  // namespace profcollect
