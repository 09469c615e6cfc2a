// `profcollect kernel --duration S [--vmlinux PATH] [--modules DIR] -o DIR [--format LIST]`:
// a kernel profile of the whole machine for S seconds (collector/kernel/kernel_collection.h), with the
// seconds left shown on a terminal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace profcollect {

struct KernelOptions {
  double duration = 0;
  std::optional<std::string> vmlinux;
  std::optional<std::string> modules_dir;
  std::string output_dir = "profcollect.kernel";
  std::string formats;  // empty: the default (autofdo and unsymbolized, as a vmlinux allows)
  std::optional<uint64_t> frequency;
  std::optional<uint64_t> period;
  std::optional<uint64_t> mmap_pages;
  std::vector<std::string> debug_dirs;
  std::string notes_path;  // hidden: the running kernel's notes file (tests give their own)
  bool quiet = false;
};

// Returns the exit code; throws for errors before collection starts.
int run_kernel(const KernelOptions& options);

}  // namespace profcollect
