// llvm-bolt-19 optimizing the branch fixtures (branch_recorder's real executions) with our branch
// fdata and with perf2bolt's: BOLT must profile the same functions with the same execution
// counts, lay them out in the same order and report the same dyno stats; both optimized builds
// must run and print what the original prints.
#include <algorithm>
#include <map>
#include <regex>

#include <gtest/gtest.h>

#include "tests/integration/branch_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
const char* const kPerf2Bolt = "/usr/lib/llvm-19/bin/perf2bolt";
const char* const kLlvmBolt = "llvm-bolt-19";

// What llvm-bolt says about a profile it applied.
struct BoltReport {
  CommandResult run;
  std::vector<std::string> argv;
  std::string profiled_line;  // "N out of M functions ... non-empty execution profile"
  std::map<std::string, std::string> profiled;  // function -> "Exec Count" (from -print-profile)
  // function -> its -print-profile listing: blocks with execution counts, edges with branch counts
  std::map<std::string, std::string> listings;
  std::vector<std::string> dyno_stats;      // "count : what" lines of -dyno-stats
  std::vector<std::string> function_order;  // -generate-function-order (hfsort's order)
};

// BOLT numbers its block labels (.LFT3, .Ltmp5) with counters shared by all functions, and lists
// secondary entry points, in an order that follows the fdata's line order, which carries no
// meaning: sorts the entry points and renames each label to its rank of first appearance.
std::string canonical_labels(const std::string& raw_listing) {
  static const std::regex label("\\.L[A-Za-z_]+[0-9]+");
  static const std::string entry_points = "  Secondary Entry Points : ";
  std::string listing;
  for (const std::string& line : split_lines(raw_listing)) {
    if (!line.starts_with(entry_points)) {
      listing += line + "\n";
      continue;
    }
    std::vector<std::string> entries;
    std::string rest = line.substr(entry_points.size());
    for (size_t comma; (comma = rest.find(", ")) != std::string::npos; rest.erase(0, comma + 2)) {
      entries.push_back(rest.substr(0, comma));
    }
    entries.push_back(rest);
    std::sort(entries.begin(), entries.end());
    listing += entry_points;
    for (size_t i = 0; i < entries.size(); ++i) listing += (i ? ", " : "") + entries[i];
    listing += "\n";
  }
  std::map<std::string, std::string> names;
  std::string out;
  auto last = listing.cbegin();
  for (std::sregex_iterator it(listing.begin(), listing.end(), label), end; it != end; ++it) {
    out.append(last, listing.cbegin() + it->position());
    auto [slot, added] = names.try_emplace(it->str(), ".L#" + std::to_string(names.size()));
    out += slot->second;
    last = listing.cbegin() + it->position() + it->length();
  }
  out.append(last, listing.cend());
  return out;
}

BoltReport optimize(const fs::path& binary, const fs::path& fdata, const fs::path& out) {
  BoltReport report;
  const fs::path order = out.string() + ".order";
  report.argv = {kLlvmBolt,
                 binary.string(),
                 "-o",
                 out.string(),
                 "-data=" + fdata.string(),
                 "-reorder-blocks=ext-tsp",
                 "-reorder-functions=hfsort",
                 "-split-functions",
                 "-dyno-stats",
                 "-print-profile",
                 "-generate-function-order=" + order.string()};
  report.run = run_command(report.argv);
  const std::regex function_header("^Binary Function \"(.*)\" after attaching profile \\{$");
  const std::regex exec_count("^\\s*Exec Count\\s*:\\s*(\\S+)$");
  const std::regex dyno_line("^\\s*[0-9]+ : .*$");
  std::string current, listed;
  for (const std::string& line : split_lines(report.run.out + "\n" + report.run.err)) {
    std::smatch m;
    if (!listed.empty()) {
      report.listings[listed] += line + "\n";
      if (line.starts_with("End of Function")) listed.clear();
    }
    if (line.find("have non-empty execution profile") != std::string::npos) {
      report.profiled_line = line;
    } else if (std::regex_match(line, m, function_header)) {
      current = listed = m[1];
      report.profiled[current] = "?";
    } else if (!current.empty() && std::regex_match(line, m, exec_count)) {
      report.profiled[current] = m[1];
      current.clear();
    } else if (std::regex_match(line, dyno_line)) {
      report.dyno_stats.push_back(line);
    }
  }
  for (auto& [function, listing] : report.listings) listing = canonical_labels(listing);
  if (fs::exists(order)) report.function_order = split_lines(read_file(order));
  return report;
}

// Runs `program` from a directory of its own holding it and libbranchlib.so (found through its
// $ORIGIN rpath), with the file called `replaced` swapped for `replacement` when given.
CommandResult run_program(const fs::path& dir, const fs::path& program, const fs::path& library,
                          const std::string& replaced, const fs::path& replacement) {
  fs::create_directories(dir);
  fs::copy_file(program, dir / program.filename(), fs::copy_options::overwrite_existing);
  fs::copy_file(library, dir / library.filename(), fs::copy_options::overwrite_existing);
  if (!replacement.empty())
    fs::copy_file(replacement, dir / replaced, fs::copy_options::overwrite_existing);
  return run_command({(dir / program.filename()).string()}, {.cwd = dir});
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

class ConvertBranchBoltOptimize : public BranchFixtureTest,
                                  public ::testing::WithParamInterface<BranchCase> {};

TEST_P(ConvertBranchBoltOptimize, SameProfiledFunctionsAsPerf2boltAndSameOutput) {
  for (const char* tool : {kPerf2Bolt, kLlvmBolt}) {
    if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
  }
  const auto& c = GetParam();
  TempDir dir;
  const fs::path data = fixture(c.data), binary = fixture(c.binary), program = fixture(c.program),
                 library = fixture("libbranchlib.so");
  const fs::path ours = dir / "ours.fdata", ref = dir / "ref.fdata";

  const std::vector<std::string> convert = {profcollect_exe().string(),
                                            "convert",
                                            "-q",
                                            "-p",
                                            data.string(),
                                            "-o",
                                            ours.string(),
                                            binary.string()};
  const CommandResult converted = run_command(convert);
  ASSERT_EQ(converted.exit_code, 0) << converted.describe(convert);
  const std::vector<std::string> judge = {kPerf2Bolt, "-p",         data.string(),
                                          "-o",       ref.string(), binary.string()};
  const CommandResult judged = run_command(judge, {.cwd = dir.path()});
  ASSERT_EQ(judged.exit_code, 0) << judged.describe(judge);

  const BoltReport with_ours = optimize(binary, ours, dir / "ours.bolt");
  ASSERT_EQ(with_ours.run.exit_code, 0) << with_ours.run.describe(with_ours.argv);
  const BoltReport with_ref = optimize(binary, ref, dir / "ref.bolt");
  ASSERT_EQ(with_ref.run.exit_code, 0) << with_ref.run.describe(with_ref.argv);

  ASSERT_FALSE(with_ref.profiled.empty()) << "BOLT profiled nothing with perf2bolt's fdata:\n"
                                          << with_ref.run.out << with_ref.run.err;
  ASSERT_FALSE(with_ref.profiled_line.empty()) << with_ref.run.out << with_ref.run.err;
  EXPECT_EQ(with_ours.profiled_line, with_ref.profiled_line);
  EXPECT_EQ(with_ours.profiled, with_ref.profiled);
  for (const auto& [function, listing] : with_ref.listings) {
    const auto ours_listing = with_ours.listings.find(function);
    if (ours_listing == with_ours.listings.end()) continue;  // reported by the set comparison
    EXPECT_EQ(ours_listing->second, listing) << function << " has other block or edge counts";
  }
  EXPECT_EQ(join(with_ours.function_order), join(with_ref.function_order));
  EXPECT_FALSE(with_ref.dyno_stats.empty());
  EXPECT_EQ(join(with_ours.dyno_stats), join(with_ref.dyno_stats));

  const CommandResult original = run_program(dir / "run_original", program, library, "", "");
  ASSERT_EQ(original.exit_code, 0) << original.describe({program.string()});
  ASSERT_FALSE(original.out.empty());
  for (const char* variant : {"ours", "ref"}) {
    const CommandResult optimized =
        run_program(dir / (std::string("run_") + variant), program, library, c.binary,
                    dir / (std::string(variant) + ".bolt"));
    EXPECT_EQ(optimized.exit_code, 0) << variant << " build: " << optimized.err;
    EXPECT_EQ(optimized.out, original.out) << variant << " build prints something else";
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, ConvertBranchBoltOptimize, ::testing::ValuesIn(branch_cases()),
                         branch_case_name);

}  // namespace
}  // namespace profcollect::test
