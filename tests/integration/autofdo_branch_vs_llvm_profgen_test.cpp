// AutoFDO profiles from branch samples, judged by llvm-profgen-19 --perfscript. No machine here
// records branch stacks, so the test writes `perf script -F ip,brstack --show-mmap-events` text
// itself, following the real control flow of the branchy fixture as its disassembly
// (llvm-objdump-19) shows it: main calls loop; loop's body calls leaf, leaf returns, the loop's
// back edge jumps to the body; one call into loop comes from outside the binary.
//
// Both sides read the same text: llvm-profgen directly, we through PerfScriptReader, the process
// table, the resolver, BranchStackCounter and the AutoFDO writer. Also: our unsymbolized profile
// equals llvm-profgen --skip-symbolization's byte for byte, and reads back to the same profile.
#include <cinttypes>
#include <cstdio>
#include <regex>

#include <gtest/gtest.h>

#include "collector/input/perf_script_reader.h"
#include "mapper/autofdo_binary.h"
#include "mapper/binary_matcher.h"
#include "mapper/exec_segment_map.h"
#include "mapper/process_table.h"
#include "mapper/target_image_selector.h"
#include "output/autofdo_writer.h"
#include "output/branch_stack_counter.h"
#include "output/unsymbolized_writer.h"
#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kLoadBase = 0x555555554000;  // where the made-up process maps the PIE
constexpr uint64_t kOutside = 0x7ffff7dd1234;   // a caller in another library

struct Flow {
  uint64_t loop_entry = 0, loop_call = 0, return_address = 0, back_edge = 0, body = 0;
  uint64_t leaf_entry = 0, leaf_ret = 0, main_call = 0;
};

// Instructions of the functions named, from llvm-objdump-19 -d --no-show-raw-insn.
struct Disassembly {
  struct Instruction {
    uint64_t address;
    std::string mnemonic;
    std::string operands;
  };
  std::map<std::string, std::vector<Instruction>> functions;
  std::map<std::string, uint64_t> starts;
};

Disassembly disassemble(const fs::path& binary) {
  const std::vector<std::string> argv = {"llvm-objdump-19", "-d", "--no-show-raw-insn",
                                         binary.string()};
  const CommandResult run = run_command(argv);
  EXPECT_EQ(run.exit_code, 0) << run.describe(argv);
  Disassembly result;
  const std::regex header("^([0-9a-f]+) <([^>]+)>:$");
  const std::regex instruction("^\\s*([0-9a-f]+):\\s+(\\S+)\\s*(.*)$");
  std::string current;
  for (const std::string& line : split_lines(run.out)) {
    std::smatch m;
    if (std::regex_match(line, m, header)) {
      current = m[2];
      result.starts[current] = std::stoull(m[1], nullptr, 16);
    } else if (!current.empty() && std::regex_match(line, m, instruction)) {
      result.functions[current].push_back({std::stoull(m[1], nullptr, 16), m[2], m[3]});
    }
  }
  return result;
}

Flow read_flow(const Disassembly& d) {
  Flow flow;
  flow.loop_entry = d.starts.at("loop");
  flow.leaf_entry = d.starts.at("leaf");
  const auto& loop = d.functions.at("loop");
  for (size_t i = 0; i < loop.size(); ++i) {
    const auto& ins = loop[i];
    if (ins.mnemonic.starts_with("call") && ins.operands.find("<leaf>") != std::string::npos) {
      flow.loop_call = ins.address;
      flow.return_address = loop.at(i + 1).address;
    }
    if (ins.mnemonic.starts_with("j") && !ins.mnemonic.starts_with("jmp")) {
      const uint64_t target = std::stoull(ins.operands, nullptr, 16);
      if (target < ins.address && target >= flow.loop_entry) {
        flow.back_edge = ins.address;
        flow.body = target;
      }
    }
  }
  for (const auto& ins : d.functions.at("leaf")) {
    if (ins.mnemonic.starts_with("ret")) flow.leaf_ret = ins.address;
  }
  for (const auto& ins : d.functions.at("main")) {
    if (ins.mnemonic.starts_with("call") && ins.operands.find("<loop>") != std::string::npos)
      flow.main_call = ins.address;
  }
  return flow;
}

std::string hex(uint64_t v) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "%" PRIx64, v);
  return buffer;
}

std::string entry(uint64_t from, uint64_t to, bool from_binary = true) {
  return "0x" + hex(from_binary ? kLoadBase + from : from) + "/0x" + hex(kLoadBase + to) +
         "/P/-/-/0 ";
}

// One sample: its IP and branch entries, newest first.
struct ScriptSample {
  uint64_t ip = 0;
  std::string entries;
};

// The perf script text: the MMAP2 line of the executable segment, then the samples.
std::string make_perf_script(const fs::path& binary, const std::vector<ScriptSample>& samples) {
  std::shared_ptr<const ElfBinary> elf = ElfBinary::open(binary.string());
  const LoadSegment* text = nullptr;
  for (const LoadSegment& s : elf->load_segments()) {
    if (s.executable()) text = &s;
  }
  EXPECT_NE(text, nullptr);
  if (text == nullptr) return "";
  const uint64_t page = text->vaddr & ~uint64_t{0xfff};
  const uint64_t length = ((text->vaddr + text->memsz + 0xfff) & ~uint64_t{0xfff}) - page;
  std::string out = "PERF_RECORD_MMAP2 4242/4242: [0x" + hex(kLoadBase + page) + "(0x" +
                    hex(length) + ") @ 0x" + hex(text->offset & ~uint64_t{0xfff}) +
                    " fe:00 1234 0]: r-xp " + binary.string() + "\n";
  for (const ScriptSample& sample : samples)
    out += "    " + hex(kLoadBase + sample.ip) + " " + sample.entries + "\n";
  return out;
}

// Windows of the branchy run: loop's body calls leaf, leaf returns, the back edge jumps back;
// main's call into loop, and one from outside the binary.
std::vector<ScriptSample> branchy_samples(const Flow& f) {
  const std::string call = entry(f.loop_call, f.leaf_entry);
  const std::string ret = entry(f.leaf_ret, f.return_address);
  const std::string back = entry(f.back_edge, f.body);
  std::vector<ScriptSample> samples;
  for (int i = 0; i < 3; ++i) {
    samples.push_back({f.leaf_entry, call + back + ret + call + back + ret + call});
    samples.push_back({f.return_address, ret + call + back + ret + call});
  }
  samples.push_back({f.leaf_entry, call + entry(f.main_call, f.loop_entry)});
  samples.push_back({f.leaf_entry, call + entry(kOutside, f.loop_entry, false)});
  return samples;
}

// Samples spinning in every loop of the functions named: each loop's back edge taken over and
// over, so the ranges cover the loops' bodies (vectorized and unrolled ones included).
std::vector<ScriptSample> loop_samples(const Disassembly& d,
                                       const std::vector<std::string>& functions) {
  std::vector<ScriptSample> samples;
  for (const std::string& name : functions) {
    const uint64_t start = d.starts.at(name);
    for (const auto& ins : d.functions.at(name)) {
      if (!ins.mnemonic.starts_with("j") || ins.mnemonic.starts_with("jmp")) continue;
      const uint64_t target = std::stoull(ins.operands, nullptr, 16);
      if (target >= ins.address || target < start) continue;
      // Only loops whose body runs straight from the target to the back edge.
      bool straight = true;
      for (const auto& other : d.functions.at(name)) {
        if (other.address >= target && other.address < ins.address &&
            (other.mnemonic.starts_with("jmp") || other.mnemonic.starts_with("call") ||
             other.mnemonic.starts_with("ret"))) {
          straight = false;
        }
      }
      if (!straight) continue;
      std::string entries;
      for (int i = 0; i < 8; ++i) entries += entry(ins.address, target);
      for (int weight = 0; weight < 5; ++weight) samples.push_back({target, entries});
    }
  }
  return samples;
}

class AutofdoBranchTest : public AutofdoFixtureTest {
 protected:
  void SetUp() override {
    AutofdoFixtureTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!have_executable("llvm-objdump-19")) GTEST_SKIP() << "llvm-objdump-19 is not installed";
    binary_ = fixture("branchy");
    flow_ = read_flow(disassemble(binary_));
    ASSERT_NE(flow_.loop_call, 0u);
    ASSERT_NE(flow_.back_edge, 0u);
    ASSERT_NE(flow_.leaf_ret, 0u);
    ASSERT_NE(flow_.main_call, 0u);
    ASSERT_LT(flow_.body, flow_.loop_call)
        << "the call must lie between the back edge's target and the back edge";
    ASSERT_LT(flow_.loop_call, flow_.back_edge);
    script_ = dir_ / "branches.perfscript";
    write_file(script_, make_perf_script(binary_, branchy_samples(flow_)));
  }

  // Our side: the text through PerfScriptReader and the resolver into ranges and branches.
  RangeProfile our_ranges(const AutofdoBinary& binary, size_t expected_samples = 8) {
    std::shared_ptr<const ElfBinary> elf = ElfBinary::open(binary_.string());
    std::unique_ptr<PerfScriptReader> reader = PerfScriptReader::open(script_.string());
    TargetImageSelector selector(
        std::make_shared<LoadedImage>(elf, BinaryIdentity{binary_.string(), elf->build_id()}),
        false, [](std::string_view) -> const BuildId* { return nullptr; });
    ProcessTable processes;
    ImageResolver resolver(selector);
    BranchStackCounter counter(binary.instructions());
    std::vector<BranchEnds> stack;
    Record record;
    auto vaddr = [&](uint32_t pid, uint64_t address) {
      const ResolvedAddress r = resolver.resolve(processes, pid, address, CpuMode::User);
      return r.outcome == SampleOutcome::Mapped ? r.vaddr : kExternalAddress;
    };
    while (reader->next(record)) {
      if (const auto* sample = std::get_if<SampleRecord>(&record)) {
        stack.clear();
        for (const BranchEntry& b : sample->branches) {
          stack.push_back(BranchEnds{vaddr(sample->pid, b.from), vaddr(sample->pid, b.to)});
        }
        counter.add(stack);
      } else {
        processes.update(record);
      }
    }
    EXPECT_EQ(reader->stats().samples, expected_samples);
    EXPECT_EQ(counter.stats().invalid_ranges, 0u);
    return counter.take();
  }

  std::string reference() {
    return normalize_profile(
        run_llvm_profgen({"--perfscript=" + script_.string(), "--binary=" + binary_.string()},
                         dir_.path()),
        dir_.path());
  }

  std::unique_ptr<AutofdoBinary> open_binary() {
    AutofdoBinaryOptions options;
    options.debug_dirs.clear();
    return AutofdoBinary::open(ElfBinary::open(binary_.string()), options);
  }

  TempDir dir_;
  fs::path binary_, script_;
  Flow flow_;
};

// The vectorized and unrolled loops of the vec fixture: the line counts are the MAX over a
// line's instructions of count x duplication factor.
class AutofdoLoopBranchTest : public AutofdoBranchTest {
 protected:
  void SetUp() override {
    AutofdoFixtureTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!have_executable("llvm-objdump-19")) GTEST_SKIP() << "llvm-objdump-19 is not installed";
    binary_ = fixture("vec");
    samples_ = loop_samples(disassemble(binary_),
                            {"_Z5saxpyfPKfPfi", "_Z3dotPKfS0_i", "_Z9histogramPKfi"});
    ASSERT_GE(samples_.size(), 15u) << "expected several loops";
    script_ = dir_ / "loops.perfscript";
    write_file(script_, make_perf_script(binary_, samples_));
  }
  std::vector<ScriptSample> samples_;
};

TEST_F(AutofdoLoopBranchTest, ProfileEqualsLlvmProfgen) {
  std::unique_ptr<AutofdoBinary> binary = open_binary();
  const RangeProfile ranges = our_ranges(*binary, samples_.size());
  // Some counted instruction must carry a duplication factor, or the MAX x factor rule is idle.
  bool duplicated = false;
  for (const auto& [range, count] : ranges.ranges) {
    binary->instructions().for_each(range.first, range.second, [&](const Instruction& i) {
      const InlineStack& frames = binary->dwarf().symbolize(i.address);
      if (!frames.empty() &&
          duplication_factor(frames.back().discriminator, binary->discriminator_encoding()) > 1) {
        duplicated = true;
      }
    });
  }
  EXPECT_TRUE(duplicated);
  const std::string ours = write_autofdo_from_ranges(ranges, *binary);
  EXPECT_EQ("", profile_difference(normalize_profile(ours, dir_.path()), reference()));
}

TEST_F(AutofdoBranchTest, ProfileEqualsLlvmProfgen) {
  std::unique_ptr<AutofdoBinary> binary = open_binary();
  const std::string ours = write_autofdo_from_ranges(our_ranges(*binary), *binary);
  const std::string expected = reference();
  // The judge saw what the text describes: calls to leaf from loop, and calls into loop.
  EXPECT_NE(expected.find(" leaf:"), std::string::npos) << expected;
  EXPECT_NE(expected.find(" loop:"), std::string::npos) << expected;
  EXPECT_EQ("", profile_difference(normalize_profile(ours, dir_.path()), expected));
}

TEST_F(AutofdoBranchTest, UnsymbolizedProfileEqualsLlvmProfgenSkipSymbolization) {
  std::unique_ptr<AutofdoBinary> binary = open_binary();
  const std::string ours =
      write_unsymbolized_profile(our_ranges(*binary), binary->preferred_base());
  const fs::path theirs = dir_ / "theirs.unsym";
  const std::vector<std::string> argv = {"llvm-profgen-19", "--perfscript=" + script_.string(),
                                         "--binary=" + binary_.string(), "--skip-symbolization",
                                         "--output=" + theirs.string()};
  const CommandResult run = run_command(argv);
  ASSERT_EQ(run.exit_code, 0) << run.describe(argv);
  EXPECT_EQ(ours, read_file(theirs));
}

TEST_F(AutofdoBranchTest, UnsymbolizedProfileReadBackGivesTheSameProfile) {
  std::unique_ptr<AutofdoBinary> binary = open_binary();
  const fs::path unsymbolized = dir_ / "ours.unsym";
  write_file(unsymbolized,
             write_unsymbolized_profile(our_ranges(*binary), binary->preferred_base()));
  const std::string round_trip = run_llvm_profgen(
      {"--unsymbolized-profile=" + unsymbolized.string(), "--binary=" + binary_.string()},
      dir_.path());
  EXPECT_EQ("", profile_difference(normalize_profile(round_trip, dir_.path()), reference()));
}

}  // namespace
}  // namespace profcollect::test
