// A kernel profile by function when no vmlinux with debug info is at hand: each sampled runtime
// address is given to the kernel text symbol at or below it (the running kernel's own symbol
// table, /proc/kallsyms, as `perf report --sort sym` uses it), so the counts need nothing but
// the running kernel. Functions come out by samples, most first (then by name), each with its
// share of every kernel sample; modules are counted too, by the module each function belongs to.
//
// Written as `functions.txt`, one function a line:
//
//     <samples> <share %> <name> [<module>]     module "kernel" for the kernel image
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <unordered_map>
#include <vector>

namespace profcollect {

// One text symbol of the running kernel: runtime address, name, and its module ("" for the
// kernel image).
struct KernelSymbol {
  uint64_t address = 0;
  std::string name;
  std::string module;
};

struct KernelFunctionCount {
  std::string name;
  std::string module;  // "" for the kernel image
  uint64_t samples = 0;
  double share = 0;  // of every kernel sample, in [0, 1]
};

struct KernelFunctionSummary {
  uint64_t samples = 0;       // every kernel sample counted
  uint64_t unattributed = 0;  // below the first symbol, or past a module's or the text's end
  std::vector<KernelFunctionCount> functions;             // by samples, most first
  std::vector<std::pair<std::string, uint64_t>> modules;  // samples per module, most first
};

// `symbols` sorted by address; `text_end`: the end of the kernel image's text (_etext), beyond
// which an address in no module is not given to the image's last symbol (0: no such limit).
// `module_ranges` are [start, end) of each module's memory, by name.
struct ModuleRange {
  std::string name;
  uint64_t start = 0, end = 0;
};
KernelFunctionSummary summarize_kernel_functions(
    const std::unordered_map<uint64_t, uint64_t>& address_counts,
    const std::vector<KernelSymbol>& symbols, uint64_t text_end,
    const std::vector<ModuleRange>& module_ranges);

std::string render_kernel_functions(const KernelFunctionSummary& summary);

// functions.txt read back: its functions (samples, name, module; shares as written), nullopt
// with `error` ("line N: ...") at the first line that is not "<count> <share>% <name> <module>".
// The totals (samples, unattributed, modules) are not in the file; they stay 0.
std::optional<KernelFunctionSummary> parse_kernel_functions(std::string_view text,
                                                            std::string* error);

// Adds `more` to `into`: counts of the same (module, name) add, as do the totals and the
// modules; shares are taken again of the new total, and the order is remade.
void add_kernel_functions(KernelFunctionSummary& into, const KernelFunctionSummary& more);

}  // namespace profcollect
