#include "tests/integration/convert_judges.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <regex>
#include <set>
#include <sstream>

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> result;
  std::istringstream in{std::string(line)};
  std::string word;
  while (in >> word) result.push_back(word);
  return result;
}

std::optional<uint64_t> parse_number(std::string_view text, int base) {
  if (base == 16 && (text.starts_with("0x") || text.starts_with("0X"))) text.remove_prefix(2);
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string hex(uint64_t value) {
  std::ostringstream text;
  text << "0x" << std::hex << value;
  return text.str();
}

std::string canonical_path(const fs::path& path) {
  std::error_code error;
  const fs::path resolved = fs::canonical(path, error);
  return error ? path.string() : resolved.string();
}

}  // namespace

NoLbrFdata parse_no_lbr_fdata(std::string_view text) {
  NoLbrFdata fdata;
  for (const std::string& line : split_lines(text)) {
    if (line.starts_with("no_lbr")) {
      fdata.header = line;
      continue;
    }
    const auto fields = words(line);
    std::optional<uint64_t> offset, count;
    if (fields.size() == 4 && fields[0] == "1") {
      offset = parse_number(fields[2], 16);
      count = parse_number(fields[3], 10);
    }
    if (!offset || !count) {
      fdata.malformed_lines.push_back(line);
      continue;
    }
    fdata.counts[{fields[1], *offset}] += *count;
  }
  return fdata;
}

std::vector<std::string> sorted_lines(std::string_view text) {
  auto lines = split_lines(text);
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::string line_differences(const std::vector<std::string>& expected,
                             const std::vector<std::string>& actual, size_t limit) {
  std::multiset<std::string> want(expected.begin(), expected.end());
  std::multiset<std::string> got(actual.begin(), actual.end());
  std::ostringstream text;
  size_t missing = 0, extra = 0;
  for (const auto& line : want) {
    if (auto it = got.find(line); it != got.end()) {
      got.erase(it);
      continue;
    }
    if (missing++ < limit) text << "  only in expected: " << line << "\n";
  }
  for (const auto& line : got)
    if (extra++ < limit) text << "  only in actual:   " << line << "\n";
  text << "  (" << missing << " lines only in expected, " << extra << " only in actual)";
  return text.str();
}

std::optional<std::vector<PerfScriptSample>> perf_script_samples(const fs::path& data,
                                                                 std::string& error) {
  const std::vector<std::string> argv = {"perf",        "script", "--no-demangle",        "-i",
                                         data.string(), "-F",     "pid,ip,sym,symoff,dso"};
  const CommandResult run = run_command(argv);
  if (run.exit_code != 0) {
    error = run.describe(argv);
    return std::nullopt;
  }
  std::vector<PerfScriptSample> samples;
  // "  7484      55d0c2a01248 work+0xa8 (/path/to/hot)"; the dso may contain spaces.
  static const std::regex line_format(R"(^\s*(\d+)\s+([0-9a-f]+)\s+(\S+)\s+\((.*)\)\s*$)");
  for (const std::string& line : split_lines(run.out)) {
    std::smatch match;
    if (!std::regex_match(line, match, line_format)) {
      error = "unexpected perf script line: " + line;
      return std::nullopt;
    }
    PerfScriptSample sample;
    sample.pid = static_cast<uint32_t>(*parse_number(match[1].str(), 10));
    sample.ip = *parse_number(match[2].str(), 16);
    sample.dso = match[4].str();
    const std::string symbol = match[3].str();
    if (symbol != "[unknown]") {
      const size_t plus = symbol.rfind("+0x");
      if (plus == std::string::npos) {
        sample.symbol = symbol;
      } else {
        sample.symbol = symbol.substr(0, plus);
        sample.symbol_offset = parse_number(symbol.substr(plus + 1), 16).value_or(0);
      }
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::optional<BinarySymbols> BinarySymbols::load(const fs::path& binary, std::string& error) {
  BinarySymbols table;

  const std::vector<std::string> syms_argv = {"readelf", "-sW", binary.string()};
  const CommandResult syms = run_command(syms_argv);
  if (syms.exit_code != 0) {
    error = syms.describe(syms_argv);
    return std::nullopt;
  }
  bool in_symtab = false;
  for (const std::string& line : split_lines(syms.out)) {
    if (line.starts_with("Symbol table ")) {
      in_symtab = line.find("'.symtab'") != std::string::npos;
      continue;
    }
    if (!in_symtab) continue;
    // "    34: 0000000000001210   110 FUNC    LOCAL  DEFAULT   17 step"
    const auto fields = words(line);
    if (fields.size() < 8 || !fields[0].ends_with(':')) continue;
    const std::string& type = fields[3];
    const std::string& section = fields[6];
    if (section == "UND" || section == "ABS" || type == "SECTION" || type == "FILE") continue;
    const auto address = parse_number(fields[1], 16);
    const auto size =
        fields[2].starts_with("0x") ? parse_number(fields[2], 16) : parse_number(fields[2], 10);
    if (!address || !size) continue;
    table.symbols_.push_back({fields[7], *address, *size, fields[4] == "LOCAL"});
  }
  std::stable_sort(table.symbols_.begin(), table.symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.address < b.address; });

  const std::vector<std::string> sections_argv = {"readelf", "-SW", binary.string()};
  const CommandResult sections = run_command(sections_argv);
  if (sections.exit_code != 0) {
    error = sections.describe(sections_argv);
    return std::nullopt;
  }
  std::vector<std::string> plt_names;
  for (const std::string& line : split_lines(sections.out)) {
    // "  [14] .plt              PROGBITS        0000000000001020 001020 000030 10  AX  0   0 16"
    const size_t bracket = line.find(']');
    if (line.find('[') == std::string::npos || bracket == std::string::npos) continue;
    const auto fields = words(std::string_view(line).substr(bracket + 1));
    if (fields.size() < 5 || !fields[0].starts_with(".plt")) continue;
    const auto address = parse_number(fields[2], 16);
    const auto size = parse_number(fields[4], 16);
    if (!address || !size) continue;
    plt_names.push_back(fields[0]);
    table.plt_sections_.push_back({fields[0], *address, *address + *size});
  }
  if (!plt_names.empty()) {
    std::vector<std::string> objdump_argv = {"objdump", "-d"};
    for (const auto& name : plt_names) {
      objdump_argv.push_back("-j");
      objdump_argv.push_back(name);
    }
    objdump_argv.push_back(binary.string());
    const CommandResult objdump = run_command(objdump_argv);
    if (objdump.exit_code != 0) {
      error = objdump.describe(objdump_argv);
      return std::nullopt;
    }
    static const std::regex label_format(R"(^([0-9a-f]+) <(.+@plt)>:$)");
    for (const std::string& line : split_lines(objdump.out)) {
      std::smatch match;
      if (std::regex_match(line, match, label_format))
        table.plt_entries_.push_back({*parse_number(match[1].str(), 16), match[2].str()});
    }
    std::sort(table.plt_entries_.begin(), table.plt_entries_.end());
  }
  return table;
}

std::vector<uint64_t> BinarySymbols::addresses_of(const std::string& name) const {
  std::vector<uint64_t> addresses;
  for (const auto& symbol : symbols_)
    if (symbol.name == name) addresses.push_back(symbol.address);
  return addresses;
}

uint64_t BinarySymbols::size_of(const std::string& name, uint64_t address) const {
  for (const auto& symbol : symbols_)
    if (symbol.name == name && symbol.address == address) return symbol.size;
  return 0;
}

std::optional<uint64_t> BinarySymbols::bolt_function_address(const std::string& name) const {
  if (name.starts_with("__BOLT_PSEUDO_")) {
    const std::string_view section = std::string_view(name).substr(14);
    for (const auto& plt : plt_sections_)
      if (plt.name == section) return plt.start;
    return std::nullopt;
  }
  if (name.ends_with("@PLT")) {
    const std::string label = name.substr(0, name.size() - 4) + "@plt";
    for (const auto& [address, entry] : plt_entries_)
      if (entry == label) return address;
    return std::nullopt;
  }
  // BOLT makes local names unique as `name/N`, counting the local symbols of that name (data
  // objects too) in address order from 1.
  const size_t slash = name.rfind('/');
  if (slash != std::string::npos) {
    const auto ordinal = parse_number(std::string_view(name).substr(slash + 1), 10);
    if (ordinal && *ordinal > 0) {
      const std::string base = name.substr(0, slash);
      uint64_t seen = 0;
      for (const auto& symbol : symbols_)
        if (symbol.local && symbol.name == base && ++seen == *ordinal) return symbol.address;
      return std::nullopt;
    }
  }
  std::set<uint64_t> global, any;
  for (const auto& symbol : symbols_) {
    if (symbol.name != name) continue;
    any.insert(symbol.address);
    if (!symbol.local) global.insert(symbol.address);
  }
  if (global.size() == 1) return *global.begin();
  if (any.size() == 1) return *any.begin();
  return std::nullopt;
}

std::pair<uint64_t, uint64_t> BinarySymbols::site(uint64_t symbol_start, uint64_t symbol_size,
                                                  uint64_t address) const {
  const bool past_symbol = symbol_size > 0 && address >= symbol_start + symbol_size;
  const auto plt = std::find_if(plt_sections_.begin(), plt_sections_.end(), [&](const auto& s) {
    return address >= s.start && address < s.end;
  });
  if (past_symbol && plt != plt_sections_.end()) {
    auto entry = std::upper_bound(plt_entries_.begin(), plt_entries_.end(),
                                  std::make_pair(address, std::string("\xff")));
    if (entry != plt_entries_.begin() && std::prev(entry)->first >= plt->start) {
      --entry;
      return {entry->first, address - entry->first};
    }
    return {plt->start, address - plt->start};
  }
  return {symbol_start, address - symbol_start};
}

SiteCounts perf_sites(const std::vector<PerfScriptSample>& samples, const fs::path& binary,
                      const BinarySymbols& symbols, uint32_t pid, uint64_t& unknown,
                      std::string& error) {
  const std::string path = canonical_path(binary);
  std::vector<const PerfScriptSample*> selected;
  for (const auto& sample : samples)
    if (sample.dso == path && (pid == 0 || sample.pid == pid)) selected.push_back(&sample);

  // Load bias per process, from samples whose symbol name is unique in the binary; it decides
  // between same-named local symbols.
  std::map<uint32_t, uint64_t> bias;
  for (const auto* sample : selected) {
    if (sample->symbol.empty()) continue;
    const auto addresses = symbols.addresses_of(sample->symbol);
    if (addresses.size() == 1)
      bias.emplace(sample->pid, sample->ip - sample->symbol_offset - addresses.front());
  }

  SiteCounts sites;
  unknown = 0;
  for (const auto* sample : selected) {
    if (sample->symbol.empty()) {
      ++unknown;
      continue;
    }
    const auto addresses = symbols.addresses_of(sample->symbol);
    std::optional<uint64_t> start;
    if (addresses.size() == 1) {
      start = addresses.front();
    } else if (auto it = bias.find(sample->pid); it != bias.end()) {
      const uint64_t wanted = sample->ip - sample->symbol_offset - it->second;
      if (std::find(addresses.begin(), addresses.end(), wanted) != addresses.end()) start = wanted;
    }
    if (!start) {
      error = "cannot place perf's symbol " + sample->symbol + " (" +
              std::to_string(addresses.size()) + " symbols of that name) in " + path;
      return {};
    }
    const uint64_t address = *start + sample->symbol_offset;
    ++sites[symbols.site(*start, symbols.size_of(sample->symbol, *start), address)];
  }
  return sites;
}

SiteCounts fdata_sites(const NoLbrFdata& fdata, const BinarySymbols& symbols, std::string& error) {
  SiteCounts sites;
  for (const auto& [site, count] : fdata.counts) {
    const auto start = symbols.bolt_function_address(site.first);
    if (!start) {
      error += "fdata names " + site.first + ", which the binary does not define (uniquely)\n";
      continue;
    }
    sites[{*start, site.second}] += count;
  }
  return sites;
}

std::string site_differences(const SiteCounts& expected, const SiteCounts& actual, size_t limit) {
  std::ostringstream text;
  size_t shown = 0, differing = 0;
  std::set<std::pair<uint64_t, uint64_t>> keys;
  for (const auto& entry : expected) keys.insert(entry.first);
  for (const auto& entry : actual) keys.insert(entry.first);
  for (const auto& key : keys) {
    const auto want = expected.contains(key) ? expected.at(key) : 0;
    const auto got = actual.contains(key) ? actual.at(key) : 0;
    if (want == got) continue;
    ++differing;
    if (shown++ < limit)
      text << "  function " << hex(key.first) << " + " << hex(key.second) << ": expected " << want
           << ", got " << got << "\n";
  }
  text << "  (" << differing << " sites differ)";
  return text.str();
}

Perf2BoltRun run_perf2bolt(const fs::path& data, const fs::path& binary, const fs::path& out) {
  Perf2BoltRun result;
  result.argv = {kPerf2Bolt, "-p", data.string(), "-o", out.string(), "-nl", binary.string()};
  result.run = run_command(result.argv);
  std::error_code error;
  if (fs::exists(out, error)) result.fdata = read_file(out);
  return result;
}

void expect_no_profile_warning(const std::string& output) {
  static const std::regex about_profile(
      "(BOLT|PERF2BOLT)-(WARNING|ERROR).*(profile|data|sample|trace|branch|fall|count|invalid|"
      "stale|mismatch|ignored|discarded).*",
      std::regex::icase);
  static const std::regex bad_traces(
      "PERF2BOLT: (traces mismatching disassembled function contents|Out of range traces "
      "involving unknown regions): ([0-9]+) .*");
  for (const std::string& line : split_lines(output)) {
    std::smatch m;
    EXPECT_FALSE(std::regex_match(line, about_profile)) << line;
    EXPECT_EQ(line.find("!! WARNING !!"), std::string::npos) << line;
    if (std::regex_match(line, m, bad_traces)) EXPECT_EQ(m[2], "0") << line;
  }
}

BoltRun run_llvm_bolt(const fs::path& binary, const fs::path& fdata, const fs::path& out,
                      bool pre_aggregated) {
  BoltRun result;
  result.argv = {kLlvmBolt, binary.string(), "-o", out.string(), "-data=" + fdata.string()};
  if (pre_aggregated) result.argv.push_back("--pa");
  result.run = run_command(result.argv);
  static const std::regex summary(
      R"((\d+) out of (\d+) functions in the binary \([^)]*\) have non-empty execution profile)");
  std::smatch match;
  const std::string text = result.run.out + "\n" + result.run.err;
  if (std::regex_search(text, match, summary)) {
    result.profiled_functions = parse_number(match[1].str(), 10);
    result.total_functions = parse_number(match[2].str(), 10);
  }
  return result;
}

ProfcollectRun run_profcollect(const std::vector<std::string>& args) {
  ProfcollectRun result;
  result.argv = {profcollect_exe().string()};
  result.argv.insert(result.argv.end(), args.begin(), args.end());
  result.run = run_command(result.argv);
  return result;
}

}  // namespace profcollect::test
