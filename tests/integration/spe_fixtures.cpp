#include "tests/integration/spe_fixtures.h"

#include <regex>
#include <sstream>

#include "tests/integration/fixture_set.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

FixtureSet& spe_set() {
  static FixtureSet set(
      {.name = "spe",
       .script = "make_spe_fixtures.sh",
       .arguments = {PROFCOLLECT_SPE_FIXTURE_WRITER},
       .source_folder = "src",
       .is_source = [](std::string_view file) { return file.starts_with("spe_"); },
       .other_inputs = {PROFCOLLECT_SPE_FIXTURE_WRITER}});
  return set;
}
[[maybe_unused]] const bool spe_set_registered = register_fixture_set(&spe_set);

}  // namespace

void SpeFixtureTest::SetUp() { spe_set().require_ready(); }

std::filesystem::path SpeFixtureTest::fixture(const std::string& name) {
  return std::filesystem::weakly_canonical(spe_set().status().dir / name);
}

std::vector<PerfDumpTakenBranch> perf_dump_taken_branches(const std::filesystem::path& data) {
  const CommandResult dump = run_command({"perf", "report", "-D", "-i", data.string()});
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  static const std::regex packet(R"(^\.\s+[0-9a-f]{8}:\s+(?:[0-9a-f]{2} )+\s*(.*)$)");
  std::vector<PerfDumpTakenBranch> out;
  uint64_t pc = 0, target = 0;
  bool branch = false, has_target = false, not_taken = false, mispred = false, user = false;
  for (const std::string& l : split_lines(dump.out)) {
    std::smatch m;
    if (!std::regex_match(l, m, packet)) continue;
    const std::string desc = m[1];
    std::istringstream in(desc);
    std::string word;
    in >> word;
    if (word == "PC") {
      std::string addr, el;
      in >> addr >> el;
      pc = std::stoull(addr, nullptr, 16);
      user = el == "el0";
    } else if (word == "TGT") {
      std::string addr;
      in >> addr;
      target = std::stoull(addr, nullptr, 16);
      has_target = true;
    } else if (word == "B") {
      branch = true;
    } else if (word == "EV") {
      not_taken = desc.find("NOT-TAKEN") != std::string::npos;
      mispred = desc.find("MISPRED") != std::string::npos;
    } else if (word == "TS" || word == "END") {
      if (branch && has_target && !not_taken && user) out.push_back({pc, target, mispred});
      branch = has_target = not_taken = mispred = user = false;
    }
  }
  return out;
}

}  // namespace profcollect::test
