// Judges the branch-stack perf.data files that branch_recorder writes from real executions
// (tests/fixtures/make_branch_fixtures.sh): perf script reads every sample with 32 entries, every
// recorded branch agrees with objdump's disassembly of the binary, and perf2bolt and
// llvm-profgen accept the files and find the programs' hot loops and calls.
#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/branch_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

const std::string kPerf2bolt = "/usr/lib/llvm-19/bin/perf2bolt";
constexpr std::size_t kEntries = 32;

struct Branch {
  std::uint64_t from = 0;
  std::uint64_t to = 0;
};
using Sample = std::vector<Branch>;  // newest first, as perf prints it

struct BranchCase {
  std::string data;
  std::vector<std::string> binaries;  // the program and its libraries we built
  std::string hot_binary;             // where the hot code is
  // In perf2bolt's fdata of hot_binary: the top edge is a loop's back edge, or (when empty)
  // these substrings must each appear in some line (calls that the program makes).
  std::vector<std::string> expected_calls;
};

// gtest names the case by its perf.data file instead of dumping its bytes.
void PrintTo(const BranchCase& c, std::ostream* os) { *os << c.data; }

std::uint64_t hex(const std::string& text) { return std::stoull(text, nullptr, 16); }

// `perf script -F ip,brstack`: "  ip 0xFROM/0xTO/P/-/-/0/  0xFROM/0xTO/..."
std::vector<Sample> perf_script_samples(const fs::path& data, std::string& failure) {
  const std::vector<std::string> argv = {"perf", "script", "-i", data.string(), "-F", "ip,brstack"};
  const CommandResult run = run_command(argv);
  std::vector<Sample> samples;
  if (run.exit_code != 0) {
    failure = run.describe(argv);
    return samples;
  }
  for (const std::string& line : split_lines(run.out)) {
    std::istringstream words(line);
    std::string word;
    if (!(words >> word)) continue;  // the ip
    Sample sample;
    while (words >> word) {
      const auto slash = word.find('/');
      const auto slash2 = word.find('/', slash + 1);
      if (slash == std::string::npos || slash2 == std::string::npos) continue;
      sample.push_back(
          {hex(word.substr(0, slash)), hex(word.substr(slash + 1, slash2 - slash - 1))});
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

// Where a binary is mapped, from perf's own reading of the MMAP2 records.
struct ExecMapping {
  std::uint64_t start = 0, length = 0, pgoff = 0;
};
std::vector<ExecMapping> mmap_events(const fs::path& data, const fs::path& binary) {
  const CommandResult run =
      run_command({"perf", "script", "-i", data.string(), "--show-mmap-events", "-F", "ip"});
  std::vector<ExecMapping> maps;
  for (const std::string& line : split_lines(run.out)) {
    if (line.find("PERF_RECORD_MMAP2") == std::string::npos) continue;
    if (!line.ends_with(" " + binary.string())) continue;
    const auto open = line.find("[0x");
    const auto paren = line.find('(', open);
    const auto at = line.find("@ ", paren);
    if (open == std::string::npos || paren == std::string::npos || at == std::string::npos)
      continue;
    maps.push_back(
        {hex(line.substr(open + 1)), hex(line.substr(paren + 1)), hex(line.substr(at + 2))});
  }
  return maps;
}

// File offset -> ELF virtual address, from readelf's PT_LOAD lines.
struct LoadSegment {
  std::uint64_t offset = 0, vaddr = 0, filesz = 0;
};
std::vector<LoadSegment> load_segments(const fs::path& binary) {
  const CommandResult run = run_command({"readelf", "-lW", binary.string()});
  std::vector<LoadSegment> segments;
  for (const std::string& line : split_lines(run.out)) {
    std::istringstream words(line);
    std::string type, offset, vaddr, paddr, filesz;
    if (!(words >> type >> offset >> vaddr >> paddr >> filesz) || type != "LOAD") continue;
    segments.push_back({hex(offset), hex(vaddr), hex(filesz)});
  }
  return segments;
}

// objdump -d: instruction address -> mnemonic (prefixes such as bnd/notrack/rep dropped).
std::map<std::uint64_t, std::string> disassembly(const fs::path& binary) {
  const CommandResult run = run_command({"objdump", "-d", "--no-show-raw-insn", binary.string()});
  std::map<std::uint64_t, std::string> instructions;
  for (const std::string& line : split_lines(run.out)) {
    const auto colon = line.find(":\t");
    if (colon == std::string::npos || line.empty() || line[0] != ' ') continue;
    std::istringstream words(line.substr(colon + 2));
    std::string mnemonic;
    while (words >> mnemonic &&
           (mnemonic == "bnd" || mnemonic == "notrack" || mnemonic == "rep" || mnemonic == "repz" ||
            mnemonic == "lock" || mnemonic == "data16" || mnemonic == "cs" || mnemonic == "ds")) {
    }
    instructions[hex(line.substr(0, colon))] = mnemonic;
  }
  return instructions;
}

bool is_control_transfer(const std::string& mnemonic) {
  return mnemonic.starts_with("j") || mnemonic.starts_with("call") || mnemonic.starts_with("ret") ||
         mnemonic.starts_with("loop");
}

// The binary's view of a runtime address: its ELF vaddr, when the address is in the binary.
class AddressMap {
 public:
  AddressMap(std::vector<ExecMapping> maps, std::vector<LoadSegment> segments)
      : maps_(std::move(maps)), segments_(std::move(segments)) {}
  bool to_vaddr(std::uint64_t address, std::uint64_t& vaddr) const {
    for (const ExecMapping& m : maps_) {
      if (address < m.start || address >= m.start + m.length) continue;
      const std::uint64_t offset = address - m.start + m.pgoff;
      for (const LoadSegment& s : segments_)
        if (offset >= s.offset && offset < s.offset + s.filesz) {
          vaddr = offset - s.offset + s.vaddr;
          return true;
        }
    }
    return false;
  }

 private:
  std::vector<ExecMapping> maps_;
  std::vector<LoadSegment> segments_;
};

class BranchRecorderTest : public BranchFixtureTest,
                           public ::testing::WithParamInterface<BranchCase> {
 protected:
  void SetUp() override {
    BranchFixtureTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!have_executable("perf")) GTEST_SKIP() << "perf is not installed";
  }
};

TEST_P(BranchRecorderTest, PerfScriptReadsEverySampleWith32Entries) {
  std::string failure;
  const std::vector<Sample> samples = perf_script_samples(fixture(GetParam().data), failure);
  ASSERT_TRUE(failure.empty()) << failure;
  // ~400k stepped instructions take tens of thousands of branches: a sample every 37.
  ASSERT_GE(samples.size(), 500U);
  for (std::size_t i = 0; i < samples.size(); ++i)
    ASSERT_EQ(samples[i].size(), kEntries) << "sample " << i;
}

TEST_P(BranchRecorderTest, BranchesAgreeWithObjdumpDisassembly) {
  if (!have_executable("objdump") || !have_executable("readelf"))
    GTEST_SKIP() << "objdump/readelf are not installed";
  std::string failure;
  const std::vector<Sample> samples = perf_script_samples(fixture(GetParam().data), failure);
  ASSERT_TRUE(failure.empty()) << failure;
  for (const std::string& name : GetParam().binaries) {
    const fs::path binary = fixture(name);
    const AddressMap addresses(mmap_events(fixture(GetParam().data), binary),
                               load_segments(binary));
    const std::map<std::uint64_t, std::string> instructions = disassembly(binary);
    ASSERT_FALSE(instructions.empty()) << "objdump -d " << binary;
    std::size_t checked = 0;
    for (const Sample& sample : samples) {
      for (std::size_t k = 0; k < sample.size(); ++k) {
        std::uint64_t from = 0, to = 0;
        if (addresses.to_vaddr(sample[k].from, from)) {
          const auto it = instructions.find(from);
          ASSERT_NE(it, instructions.end())
              << name << ": branch source 0x" << std::hex << from << " is not an instruction start";
          EXPECT_TRUE(is_control_transfer(it->second))
              << name << ": 0x" << std::hex << from << " is `" << it->second << "`, not a branch";
          ++checked;
        }
        if (addresses.to_vaddr(sample[k].to, to)) {
          ASSERT_TRUE(instructions.contains(to))
              << name << ": branch target 0x" << std::hex << to << " is not an instruction start";
        }
        // Between the older entry's target and this entry's source execution fell through.
        std::uint64_t older_to = 0;
        if (k + 1 < sample.size() && addresses.to_vaddr(sample[k + 1].to, older_to) &&
            addresses.to_vaddr(sample[k].from, from)) {
          ASSERT_LE(older_to, from) << name << ": fall-through range runs backwards";
        }
      }
    }
    EXPECT_GT(checked, 1000U) << name << ": too few branches in the binary to judge";
  }
}

// One fdata line: "1 fn off 1 fn off mispredicts count".
struct FdataEdge {
  std::string from_function, to_function;
  std::uint64_t from_offset = 0, to_offset = 0, count = 0;
};
std::vector<FdataEdge> parse_fdata(const std::string& text) {
  std::vector<FdataEdge> edges;
  for (const std::string& line : split_lines(text)) {
    std::istringstream words(line);
    std::string from_kind, from_off, to_kind, to_off;
    FdataEdge edge;
    std::uint64_t mispredicts = 0;
    if (words >> from_kind >> edge.from_function >> from_off >> to_kind >> edge.to_function >>
        to_off >> mispredicts >> edge.count) {
      edge.from_offset = hex(from_off);
      edge.to_offset = hex(to_off);
      edges.push_back(edge);
    }
  }
  return edges;
}

TEST_P(BranchRecorderTest, Perf2boltAcceptsItAndFindsTheHotCode) {
  if (!have_executable(kPerf2bolt)) GTEST_SKIP() << kPerf2bolt << " is not installed";
  std::string failure;
  const std::vector<Sample> samples = perf_script_samples(fixture(GetParam().data), failure);
  ASSERT_TRUE(failure.empty()) << failure;
  TempDir tmp;
  const std::vector<std::string> argv = {kPerf2bolt,
                                         "-p",
                                         fixture(GetParam().data).string(),
                                         "-o",
                                         (tmp / "out.fdata").string(),
                                         fixture(GetParam().hot_binary).string()};
  const CommandResult run = run_command(argv, {.cwd = tmp.path()});
  ASSERT_EQ(run.exit_code, 0) << run.describe(argv);
  const std::string said = run.out + run.err;
  EXPECT_NE(said.find("read " + std::to_string(samples.size()) + " samples and " +
                      std::to_string(samples.size() * kEntries) + " LBR entries"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("traces mismatching disassembled function contents: 0 (0.0%)"),
            std::string::npos)
      << said;
  const std::vector<FdataEdge> edges = parse_fdata(read_file(tmp / "out.fdata"));
  ASSERT_FALSE(edges.empty()) << said;
  if (GetParam().expected_calls.empty()) {
    const FdataEdge& top =
        *std::max_element(edges.begin(), edges.end(),
                          [](const FdataEdge& a, const FdataEdge& b) { return a.count < b.count; });
    EXPECT_EQ(top.from_function, top.to_function);
    EXPECT_LT(top.to_offset, top.from_offset) << "the hottest edge is not a loop's back edge";
  } else {
    for (const std::string& callee : GetParam().expected_calls)
      EXPECT_TRUE(std::any_of(
          edges.begin(), edges.end(),
          [&](const FdataEdge& e) { return e.to_function == callee && e.to_offset == 0; }))
          << "no call to " << callee << " in perf2bolt's fdata";
  }
}

TEST_P(BranchRecorderTest, LlvmProfgenAcceptsIt) {
  if (!have_executable("llvm-profgen-19")) GTEST_SKIP() << "llvm-profgen-19 is not installed";
  TempDir tmp;
  const std::vector<std::string> argv = {"llvm-profgen-19",
                                         "--perfdata=" + fixture(GetParam().data).string(),
                                         "--binary=" + fixture(GetParam().hot_binary).string(),
                                         "--format=text",
                                         "-o",
                                         (tmp / "out.prof").string()};
  const CommandResult run = run_command(argv, {.cwd = tmp.path()});
  ASSERT_EQ(run.exit_code, 0) << run.describe(argv);
  // A function header "name:total:head" with a non-zero total.
  bool counted = false;
  for (const std::string& line : split_lines(read_file(tmp / "out.prof"))) {
    if (line.empty() || line[0] == ' ') continue;
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first != std::string::npos && second != std::string::npos &&
        std::stoull(line.substr(first + 1, second - first - 1)) > 0)
      counted = true;
  }
  EXPECT_TRUE(counted) << read_file(tmp / "out.prof");
}

INSTANTIATE_TEST_SUITE_P(
    Programs, BranchRecorderTest,
    ::testing::Values(
        BranchCase{"branch_loop.data", {"branch_loop"}, "branch_loop", {}},
        BranchCase{"branch_virtual.data",
                   {"branch_virtual"},
                   "branch_virtual",
                   {"_ZNK6Square4areaEd", "_ZNK6Circle4areaEd", "_ZNK8Triangle4areaEd"}},
        BranchCase{
            "branch_lib.data", {"branch_lib_main", "libbranchlib.so"}, "libbranchlib.so", {}}),
    [](const ::testing::TestParamInfo<BranchCase>& info) {
      std::string name = info.param.data.substr(0, info.param.data.find('.'));
      std::erase(name, '_');
      return name;
    });

}  // namespace
}  // namespace profcollect::test
