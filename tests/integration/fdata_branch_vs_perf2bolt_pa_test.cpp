// Our branch fdata against perf2bolt 19's on the same aggregated data. The profile is made from
// the binary's own disassembly (objdump): every branch instruction taken to its target (returns
// and indirect jumps to outside addresses, calls from outside to each function), and fall-through
// ranges from every branch target or call continuation to every branch source near it --
// forwards and backwards, inside and across functions, from inside ("F") and from outside ("f").
// PreaggWriter writes it, `perf2bolt --pa` turns it into fdata, and FdataBranchWriter must give
// the same lines (sorted).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "mapper/bolt_block_map.h"
#include "mapper/elf_binary.h"
#include "mapper/symbol_table.h"
#include "output/branch_profile.h"
#include "output/fdata_branch_writer.h"
#include "output/preagg_writer.h"
#include "tests/integration/fixture_set.h"
#include "tests/integration/test_support.h"

namespace profcollect {
namespace {

namespace fs = std::filesystem;
using test::run_command;

constexpr const char* kPerf2bolt = "/usr/lib/llvm-19/bin/perf2bolt";

// The binaries: built once per build tree, again when the script or a source changes.
test::FixtureSet& branch_bolt_set() {
  static test::FixtureSet set({.name = "branch_bolt",
                               .script = "make_branch_bolt_fixtures.sh",
                               .source_folder = "branch_bolt_src"});
  return set;
}
[[maybe_unused]] const bool branch_bolt_set_registered =
    test::register_fixture_set(&branch_bolt_set);

const fs::path& fixtures_dir() { return branch_bolt_set().status().dir; }

struct Disassembly {
  struct Branch {
    uint64_t address = 0;
    std::string mnemonic;
    bool direct = false;
    uint64_t target = 0;
  };
  std::vector<Branch> branches;
  std::vector<uint64_t> function_starts;
  std::vector<uint64_t> call_continuations;  // the instruction after each call
  std::vector<uint64_t> jump_fall_throughs;  // the instruction after each jump
  std::vector<uint64_t> traps;               // ud2: ends a block without a branch
};

// objdump -d of .text: every jump, call and return with its direct target, if any.
Disassembly disassemble(const fs::path& binary) {
  const test::CommandResult run =
      run_command({"objdump", "-d", "--no-show-raw-insn", "-j", ".text", binary.string()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  Disassembly out;
  const std::regex function_line(R"(^([0-9a-f]+) <[^>]+>:$)");
  const std::regex insn_line(R"(^\s+([0-9a-f]+):\s+(\S+)\s*(\S*))");
  std::istringstream lines(run.out);
  std::string line;
  bool after_call = false;
  bool after_jump = false;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, function_line)) {
      out.function_starts.push_back(std::stoull(m[1], nullptr, 16));
      after_call = false;
      after_jump = false;
      continue;
    }
    if (!std::regex_search(line, m, insn_line)) continue;
    const uint64_t address = std::stoull(m[1], nullptr, 16);
    if (after_call) out.call_continuations.push_back(address);
    if (after_jump) out.jump_fall_throughs.push_back(address);
    const std::string mnemonic = m[2];
    after_jump = mnemonic[0] == 'j';
    if (mnemonic == "ud2") out.traps.push_back(address);
    after_call = mnemonic.rfind("call", 0) == 0;
    if (mnemonic[0] != 'j' && !after_call && mnemonic.rfind("ret", 0) != 0) continue;
    Disassembly::Branch branch{address, mnemonic};
    const std::string operand = m[3];
    if (!operand.empty() && std::all_of(operand.begin(), operand.end(), ::isxdigit)) {
      branch.direct = true;
      branch.target = std::stoull(operand, nullptr, 16);
    }
    out.branches.push_back(branch);
  }
  return out;
}

// Counts that differ from record to record, so a miscounted edge shows.
uint64_t count_for(uint64_t a, uint64_t b, uint64_t salt) {
  return 1 + ((a * 2654435761u) ^ (b * 40503u) ^ salt) % 89;
}

BranchProfile profile_from(const Disassembly& code) {
  constexpr uint64_t kLibrary = 0x7f0000001000;  // an address in no binary
  BranchProfile profile;
  std::set<uint64_t> starts(code.call_continuations.begin(), code.call_continuations.end());
  for (const auto& branch : code.branches) {
    if (branch.direct) {
      profile.add_branch({branch.address, branch.target, false, false},
                         count_for(branch.address, branch.target, 1), branch.address % 3);
      starts.insert(branch.target);
    } else {
      // Returns and indirect jumps: to a library, and (returns) to each call continuation.
      profile.add_branch({branch.address, kLibrary, false, true},
                         count_for(branch.address, kLibrary, 2), 0);
      if (branch.mnemonic.rfind("ret", 0) == 0) {
        for (uint64_t continuation : code.call_continuations)
          profile.add_branch({branch.address, continuation, false, false},
                             count_for(branch.address, continuation, 3), 1);
      }
    }
  }
  for (uint64_t function : code.function_starts) {
    profile.add_branch({kLibrary + function, function, true, false},
                       count_for(kLibrary, function, 4), 0);
    starts.insert(function);
  }
  for (uint64_t continuation : code.call_continuations)
    profile.add_branch({kLibrary, continuation, true, false}, count_for(kLibrary, continuation, 5),
                       0);
  // Ranges may also start where a jump was not taken (the branch before was elsewhere) and end
  // at a trap (the sample's last branch was the trap's).
  starts.insert(code.jump_fall_throughs.begin(), code.jump_fall_throughs.end());
  std::vector<uint64_t> ends = code.traps;
  for (const auto& branch : code.branches) ends.push_back(branch.address);
  for (uint64_t start : starts) {
    for (const uint64_t end : ends) {
      if (end + 0x40 < start || end > start + 0x80) continue;
      profile.add_fall_through({start, end, false}, count_for(start, end, 6));
      profile.add_fall_through({start, end, true}, count_for(start, end, 7));
    }
  }
  return profile;
}

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class FdataBranchVsPerf2boltPa : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!test::have_executable(kPerf2bolt)) GTEST_SKIP() << kPerf2bolt << " is not installed";
    if (!test::have_executable("objdump")) GTEST_SKIP() << "objdump is not installed";
    branch_bolt_set().require_ready();
  }
};

TEST_P(FdataBranchVsPerf2boltPa, SameFdataLines) {
  const fs::path binary_path = fixtures_dir() / GetParam();
  const Disassembly code = disassemble(binary_path);
  ASSERT_GT(code.branches.size(), 5u);
  const BranchProfile profile = profile_from(code);

  const fs::path work = fixtures_dir() / (GetParam() + ".work");
  fs::create_directories(work);
  const fs::path preagg = work / "profile.preagg";
  const fs::path reference = work / "perf2bolt.fdata";
  std::ofstream(preagg) << PreaggWriter::write(profile);
  fs::remove(reference);
  const std::vector<std::string> argv = {
      kPerf2bolt, "--pa", "-p", preagg.string(), "-o", reference.string(), binary_path.string()};
  const test::CommandResult run = run_command(argv, {.cwd = work});
  ASSERT_EQ(run.exit_code, 0) << run.describe(argv);

  const auto elf = ElfBinary::open(binary_path.string());
  const SymbolTable symbols = SymbolTable::load(*elf);
  BoltBlockMap blocks(*elf);
  FdataBranchWriter writer(symbols, blocks);
  const std::string ours = writer.write(profile);
  std::ofstream(work / "ours.fdata") << ours;

  const std::vector<std::string> expected = sorted_lines(read_file(reference));
  ASSERT_GT(expected.size(), 10u) << "perf2bolt wrote too little to judge";
  EXPECT_EQ(sorted_lines(ours), expected)
      << "compare " << (work / "ours.fdata") << " with " << reference;
  // The profile holds invalid ranges and returns on purpose: both must have been seen.
  EXPECT_GT(writer.stats().invalid_ranges, 0u);
  EXPECT_GT(writer.stats().returns_ignored, 0u);
}

INSTANTIATE_TEST_SUITE_P(Binaries, FdataBranchVsPerf2boltPa, ::testing::Values("loop", "blocks"));

}  // namespace
}  // namespace profcollect
