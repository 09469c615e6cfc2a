// The BOLTed binaries with BOLT address translation and their recordings
// (tests/fixtures/make_bat_fixtures.sh), generated once into <build>/fixtures/bat/, and what the
// tests of profiles collected on BOLTed binaries judge them with: the input binaries' code as
// llvm-objdump-19 disassembles it and their symbols as nm lists them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace profcollect::test {

// Base of the tests on the BAT fixtures: skips when a tool the script needs is missing, fails
// when the script fails.
class BatFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // A file of the set: "bat_prog.bolt", "bat_prog_pie.bolt.ip.data", ...
  static std::filesystem::path fixture(const std::string& name);
};

// One line of a no_lbr or branch fdata file, split: a no_lbr line "1 <name> <off> <count>", a
// branch line "<k> <name> <off> <k> <name> <off> <mispredicts> <count>".
struct FdataFile {
  bool bolted_collection = false;  // first line "boltedcollection"
  std::string no_lbr_header;       // "no_lbr cpu-clock:" when a no_lbr file
  std::vector<std::string> lines;  // the others, sorted
  // no_lbr: (name, offset) -> count; branch: summed counts per line without its counts.
  std::map<std::pair<std::string, uint64_t>, uint64_t> samples;
  std::map<std::string, uint64_t> per_function;  // no_lbr samples, branch counts by source
  uint64_t total = 0;
};
FdataFile read_fdata_file(const std::filesystem::path& path);

// A function's name in a profile without BOLT's suffixes: "rare/bat_prog.c/1" and "rare/1" are
// "rare".
std::string plain_name(const std::string& profile_name);

// The instruction starts of each function of `binary` with a size, as offsets from its start, by
// symbol name: the instructions llvm-objdump-19 -d decodes within the extent nm -S gives.
std::map<std::string, std::set<uint64_t>> instruction_starts(const std::filesystem::path& binary);

// Symbol name -> (address, size), from `nm -S` (size 0 when nm gives none).
std::map<std::string, std::pair<uint64_t, uint64_t>> nm_symbols(
    const std::filesystem::path& binary);

}  // namespace profcollect::test
