// The independent judges of `profcollect convert` and `report`, and readers of what they print:
// perf script (samples with symbol+offset), perf2bolt -nl (reference fdata), llvm-bolt (accepts
// a profile; how many functions it profiles), readelf/objdump (function addresses).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/integration/test_support.h"

namespace profcollect::test {

inline const std::string kPerf2Bolt = "/usr/lib/llvm-19/bin/perf2bolt";
inline const std::string kLlvmBolt = "llvm-bolt-19";

// (function name as BOLT writes it, offset) -> samples.
using NamedSiteCounts = std::map<std::pair<std::string, uint64_t>, uint64_t>;
// (function start address in the ELF file, offset in the function) -> samples.
using SiteCounts = std::map<std::pair<uint64_t, uint64_t>, uint64_t>;

// A BOLT no_lbr profile: "no_lbr <event>:" then "1 <function> <hex offset> <count>" lines.
struct NoLbrFdata {
  std::string header;
  NamedSiteCounts counts;
  std::vector<std::string> malformed_lines;
};
NoLbrFdata parse_no_lbr_fdata(std::string_view text);

// The file's lines, sorted: fdata line order carries no meaning.
std::vector<std::string> sorted_lines(std::string_view text);

// "  line only in expected" / "  line only in actual" listing (at most `limit` of each).
std::string line_differences(const std::vector<std::string>& expected,
                             const std::vector<std::string>& actual, size_t limit = 20);

// One sample line of `perf script --no-demangle -F pid,ip,sym,symoff,dso`.
struct PerfScriptSample {
  uint32_t pid = 0;
  uint64_t ip = 0;
  std::string symbol;  // empty when perf prints [unknown]
  uint64_t symbol_offset = 0;
  std::string dso;  // the long name in parentheses: a path, "[kernel.kallsyms]", "[unknown]"
};

// Runs perf script on `data`; on failure returns nothing and sets `error`.
std::optional<std::vector<PerfScriptSample>> perf_script_samples(const std::filesystem::path& data,
                                                                 std::string& error);

// The symbol table of an ELF file as readelf shows it, plus its PLT entries as objdump labels
// them, to turn both perf's and BOLT's names into addresses.
class BinarySymbols {
 public:
  static std::optional<BinarySymbols> load(const std::filesystem::path& binary, std::string& error);

  // Start address of the function BOLT names `name`: a plain name, `name/N` (the N-th local
  // symbol of that name in address order, data objects included), `name@PLT` or
  // `__BOLT_PSEUDO_<section>` (the code of a PLT section before its first entry).
  std::optional<uint64_t> bolt_function_address(const std::string& name) const;

  // Addresses of the defined symbols called `name`.
  std::vector<uint64_t> addresses_of(const std::string& name) const;

  // perf 6.1 names a PLT sample after the symbol before .plt (`_init+off`, past the end of
  // _init); BOLT names it after its PLT entry, or after the section when it precedes every
  // entry (the lazy-binding header). Returns (function start, offset) for the
  // instruction at file address `address` found in symbol `symbol_start`/`symbol_size`.
  std::pair<uint64_t, uint64_t> site(uint64_t symbol_start, uint64_t symbol_size,
                                     uint64_t address) const;

  // st_size of the symbol `name` that starts at `address` (0 when there is none).
  uint64_t size_of(const std::string& name, uint64_t address) const;

 private:
  struct Symbol {
    std::string name;
    uint64_t address = 0;
    uint64_t size = 0;
    bool local = false;
  };
  std::vector<Symbol> symbols_;  // defined .symtab symbols, by address
  std::vector<std::pair<uint64_t, std::string>> plt_entries_;  // (address, "name@plt"), sorted
  struct Section {
    std::string name;
    uint64_t start = 0, end = 0;  // [start, end)
  };
  std::vector<Section> plt_sections_;
};

// perf script's samples in `binary` (matched by its canonical path), as (function, offset)
// sites in the binary's own addresses. `pid` 0 means every process. Samples perf puts in no
// symbol of the binary are counted in `unknown`. Sets `error` when a symbol cannot be resolved.
SiteCounts perf_sites(const std::vector<PerfScriptSample>& samples,
                      const std::filesystem::path& binary, const BinarySymbols& symbols,
                      uint32_t pid, uint64_t& unknown, std::string& error);

// Our fdata's lines as sites; sets `error` for a name the binary does not have.
SiteCounts fdata_sites(const NoLbrFdata& fdata, const BinarySymbols& symbols, std::string& error);

std::string site_differences(const SiteCounts& expected, const SiteCounts& actual,
                             size_t limit = 20);

// `perf2bolt -nl -p DATA -o OUT BINARY`.
struct Perf2BoltRun {
  CommandResult run;
  std::vector<std::string> argv;
  std::string fdata;  // empty when perf2bolt wrote nothing
};
Perf2BoltRun run_perf2bolt(const std::filesystem::path& data, const std::filesystem::path& binary,
                           const std::filesystem::path& out);

// `llvm-bolt-19 BINARY -o OUT -data=FDATA` and its "N out of M functions in the binary (...)
// have non-empty execution profile" line.
struct BoltRun {
  CommandResult run;
  std::vector<std::string> argv;
  std::optional<uint64_t> profiled_functions;
  std::optional<uint64_t> total_functions;
};
// Fails the test at each complaint of llvm-bolt's `output` about a profile: a warning that
// speaks of the profile or its records, its alarm at traces that do not fit the code
// ("!! WARNING !!"), or a count above 0 of such traces. (Warnings about the binary, as gcc's
// split functions, are not the profile's.)
void expect_no_profile_warning(const std::string& output);

// `pre_aggregated`: the profile is BOLT's pre-aggregated text (llvm-bolt --pa).
BoltRun run_llvm_bolt(const std::filesystem::path& binary, const std::filesystem::path& fdata,
                      const std::filesystem::path& out, bool pre_aggregated = false);

// `profcollect ARGS...`, with the argv kept for messages.
struct ProfcollectRun {
  CommandResult run;
  std::vector<std::string> argv;
  std::string describe() const { return run.describe(argv); }
};
ProfcollectRun run_profcollect(const std::vector<std::string>& args);

}  // namespace profcollect::test
