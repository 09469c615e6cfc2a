#include "tests/integration/autofdo_fixtures.h"

#include <variant>

#include "collector/input/perf_data_reader.h"
#include "mapper/binary_matcher.h"
#include "mapper/elf_binary.h"
#include "mapper/exec_segment_map.h"
#include "mapper/process_table.h"
#include "mapper/target_image_selector.h"
#include "tests/integration/fixture_set.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

FixtureSet& autofdo_set() {
  static FixtureSet set(
      {.name = "autofdo", .script = "make_autofdo_fixtures.sh", .source_folder = "autofdo_src"});
  return set;
}
[[maybe_unused]] const bool autofdo_set_registered = register_fixture_set(&autofdo_set);

}  // namespace

void AutofdoFixtureTest::SetUp() {
  for (const char* tool : {"llvm-profgen-19", "llvm-profdata-19", "perf"}) {
    if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
  }
  autofdo_set().require_ready();
}

fs::path AutofdoFixtureTest::fixture(const std::string& name) {
  return fs::weakly_canonical(autofdo_set().status().dir / name);
}

IpProfile read_ip_profile(const fs::path& perf_data, const fs::path& binary) {
  std::shared_ptr<const ElfBinary> elf = ElfBinary::open(binary.string());
  std::unique_ptr<RecordSource> source = open_perf_data(perf_data.string());
  const RecordSource& recording = *source;
  TargetImageSelector selector(
      std::make_shared<LoadedImage>(elf, BinaryIdentity{binary.string(), elf->build_id()}), false,
      [&recording](std::string_view path) -> const BuildId* {
        for (const auto& entry : recording.session().build_ids) {
          if (entry.filename == path) return &entry.build_id;
        }
        return nullptr;
      });
  ProcessTable processes;
  ImageResolver resolver(selector);
  IpProfile profile;
  Record record;
  while (source->next(record)) {
    if (const auto* sample = std::get_if<SampleRecord>(&record)) {
      const ResolvedAddress resolved =
          resolver.resolve(processes, sample->pid, sample->ip, sample->cpumode);
      if (resolved.outcome == SampleOutcome::Mapped) profile.add(resolved.vaddr);
    } else {
      processes.update(record);
    }
  }
  return profile;
}

std::string ip_perf_script(const fs::path& perf_data) {
  const std::vector<std::string> argv = {
      "perf", "script", "-i", perf_data.string(), "-F", "ip,brstack", "--show-mmap-events"};
  const CommandResult run = run_command(argv);
  EXPECT_EQ(run.exit_code, 0) << run.describe(argv);
  // The awk of oracles.md: a line with only an IP gets " 0x0/0x0/P/-/-/0".
  std::string out;
  for (const std::string& line : split_lines(run.out)) {
    out += line;
    if (line.find("PERF_RECORD_MMAP") == std::string::npos) {
      const size_t first = line.find_first_not_of(" \t");
      if (first != std::string::npos && line.find_first_of(" \t", first) == std::string::npos) {
        out += " 0x0/0x0/P/-/-/0";
      }
    }
    out += '\n';
  }
  return out;
}

std::string run_llvm_profgen(const std::vector<std::string>& arguments, const fs::path& dir) {
  static int counter = 0;
  const fs::path output = dir / ("profgen." + std::to_string(++counter) + ".prof");
  std::vector<std::string> argv = {"llvm-profgen-19"};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  argv.push_back("--format=text");
  argv.push_back("--output=" + output.string());
  const CommandResult run = run_command(argv);
  EXPECT_EQ(run.exit_code, 0) << run.describe(argv);
  if (run.exit_code != 0) return "";
  return read_file(output);
}

std::string normalize_profile(const std::string& profile_text, const fs::path& dir) {
  static int counter = 0;
  const std::string stem = "normalize." + std::to_string(++counter);
  write_file(dir / (stem + ".in"), profile_text);
  const std::vector<std::string> argv = {"llvm-profdata-19",
                                         "merge",
                                         "--sample",
                                         "--text",
                                         (dir / (stem + ".in")).string(),
                                         "-o",
                                         (dir / (stem + ".out")).string()};
  const CommandResult run = run_command(argv);
  EXPECT_EQ(run.exit_code, 0) << run.describe(argv) << "\nprofile:\n"
                              << profile_text.substr(0, 2000);
  if (run.exit_code != 0) return "<llvm-profdata rejected the profile>";
  return read_file(dir / (stem + ".out"));
}

std::string profile_difference(const std::string& ours, const std::string& reference) {
  if (ours == reference) return "";
  const std::vector<std::string> a = split_lines(ours), b = split_lines(reference);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::string message = "profiles differ from line " + std::to_string(i + 1) + " (ours " +
                        std::to_string(a.size()) + " lines, llvm-profgen " +
                        std::to_string(b.size()) + ")\n";
  for (size_t k = i; k < i + 8; ++k) {
    message += "  ours: " + (k < a.size() ? a[k] : std::string("<end>")) + "\n";
    message += "  ref:  " + (k < b.size() ? b[k] : std::string("<end>")) + "\n";
  }
  return message;
}

}  // namespace profcollect::test
