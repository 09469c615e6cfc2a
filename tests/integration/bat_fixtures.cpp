#include "tests/integration/bat_fixtures.h"

#include <algorithm>
#include <sstream>

#include "tests/integration/fixture_set.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

// Stale when the script, the program's source or the recorder changes.
FixtureSet& bat_set() {
  static FixtureSet set({.name = "bat",
                         .script = "make_bat_fixtures.sh",
                         .arguments = {PROFCOLLECT_BRANCH_RECORDER},
                         .source_folder = "bat_src",
                         .other_inputs = {PROFCOLLECT_BRANCH_RECORDER}});
  return set;
}
[[maybe_unused]] const bool bat_set_registered = register_fixture_set(&bat_set);

uint64_t hex_number(const std::string& text) { return std::stoull(text, nullptr, 16); }

}  // namespace

void BatFixtureTest::SetUp() { bat_set().require_ready(); }

fs::path BatFixtureTest::fixture(const std::string& name) {
  // Canonical, so paths compare equal to the ones recorded in MMAP2 events.
  return fs::weakly_canonical(bat_set().status().dir / name);
}

FdataFile read_fdata_file(const fs::path& path) {
  FdataFile f;
  std::vector<std::string> lines = split_lines(read_file(path));
  size_t i = 0;
  if (i < lines.size() && lines[i] == "boltedcollection") f.bolted_collection = (++i, true);
  if (i < lines.size() && lines[i].rfind("no_lbr", 0) == 0) f.no_lbr_header = lines[i++];
  for (; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    std::istringstream in(lines[i]);
    std::vector<std::string> w;
    for (std::string word; in >> word;) w.push_back(word);
    if (!f.no_lbr_header.empty()) {
      EXPECT_EQ(w.size(), 4u) << path << ": " << lines[i];
      if (w.size() != 4) continue;
      const uint64_t count = std::stoull(w[3]);
      f.samples[{w[1], hex_number(w[2])}] += count;
      f.per_function[w[1]] += count;
      f.total += count;
    } else {
      EXPECT_EQ(w.size(), 8u) << path << ": " << lines[i];
      if (w.size() != 8) continue;
      const uint64_t count = std::stoull(w[7]);
      f.per_function[w[1]] += count;
      f.total += count;
    }
    f.lines.push_back(lines[i]);
  }
  std::sort(f.lines.begin(), f.lines.end());
  return f;
}

std::string plain_name(const std::string& profile_name) {
  return profile_name.substr(0, profile_name.find('/'));
}

std::map<std::string, std::set<uint64_t>> instruction_starts(const fs::path& binary) {
  const std::vector<std::string> argv = {"llvm-objdump-19", "-d", "--no-show-raw-insn",
                                         binary.string()};
  const CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
  // Every instruction's address ("  401310: push ..."), whatever label objdump puts it under
  // (it starts a new one at alt_entry_mid, inside alt_entry).
  std::set<uint64_t> code;
  for (const std::string& line : split_lines(r.out)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || line.empty() || line[0] != ' ') continue;
    const std::string address = line.substr(0, colon);
    if (address.find_first_not_of(" 0123456789abcdef") != std::string::npos) continue;
    code.insert(hex_number(address));
  }
  // Each function symbol's extent (nm -S), as offsets from its start.
  std::map<std::string, std::set<uint64_t>> out;
  for (const auto& [name, extent] : nm_symbols(binary)) {
    const auto [address, size] = extent;
    if (size == 0) continue;
    for (auto it = code.lower_bound(address); it != code.end() && *it < address + size; ++it)
      out[name].insert(*it - address);
  }
  return out;
}

std::map<std::string, std::pair<uint64_t, uint64_t>> nm_symbols(const fs::path& binary) {
  const std::vector<std::string> argv = {"nm", "-S", binary.string()};
  const CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  for (const std::string& line : split_lines(r.out)) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string word; in >> word;) w.push_back(word);
    if (w.size() == 4) out[w[3]] = {hex_number(w[0]), hex_number(w[1])};
    if (w.size() == 3) out.emplace(w[2], std::pair<uint64_t, uint64_t>{hex_number(w[0]), 0});
  }
  return out;
}

}  // namespace profcollect::test
