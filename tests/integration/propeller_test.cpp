// The propeller format against clang-19, ld.lld-19 and llvm-readobj-19, on the Propeller
// fixtures (tests/fixtures/make_propeller_fixtures.sh: an interpreter built with
// -fbasic-block-address-map, its real taken branches and its IP samples):
//
// - every cluster names a function of the binary's address map (as llvm-readobj-19
//   --bb-addr-map prints it) and only its blocks, each once, its entry block first;
// - clang-19 compiles the program with -fbasic-block-sections=list= of our clusters without a
//   warning and ld.lld-19 links it with our symbol order without one; the relinked program
//   prints what the original prints; its own address map shows each clustered function's blocks
//   laid out in our order, each cluster a range of its own, and its symbols show the hot parts in
//   our order, then the warm parts (NAME.__part.1), then the cold parts;
// - two files' static functions of one name each get their cluster under an `m` line naming
//   their compile unit, and the relinked binary lays each out as its own cluster says (its file
//   as llvm-symbolizer-19 names it);
// - without branch stacks the edges are inferred from the IP samples, and meta.json says so;
// - a binary built without the address map gets an error that says how to build it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <utility>

#include "tests/integration/convert_judges.h"
#include "tests/integration/fixture_set.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

FixtureSet& propeller_set() {
  static FixtureSet set({.name = "propeller",
                         .script = "make_propeller_fixtures.sh",
                         .arguments = {PROFCOLLECT_BRANCH_RECORDER},
                         .source_folder = "inference_src",
                         .other_inputs = {PROFCOLLECT_BRANCH_RECORDER}});
  return set;
}
[[maybe_unused]] const bool propeller_set_registered = register_fixture_set(&propeller_set);

// A function's blocks as llvm-readobj-19 --bb-addr-map lists them: its ranges' block IDs, in
// address order, range after range.
using AddressMap = std::map<std::string, std::vector<std::vector<uint32_t>>>;

AddressMap read_address_map(const fs::path& binary) {
  const std::vector<std::string> argv = {"llvm-readobj-19", "--bb-addr-map", binary.string()};
  const CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
  AddressMap out;
  static const std::regex name("^\\s+Name: (\\S+)$");
  static const std::regex id("^\\s+ID: (\\d+)$");
  std::string function;
  for (const std::string& line : split_lines(r.out)) {
    std::smatch m;
    if (std::regex_match(line, m, name)) {
      function = m[1];
      out[function];
    } else if (line.find("Base Address:") != std::string::npos) {
      out[function].emplace_back();
    } else if (std::regex_match(line, m, id)) {
      out[function].back().push_back(static_cast<uint32_t>(std::stoul(m[1])));
    }
  }
  return out;
}

// The cluster file: function -> its clusters (`c` lines: the hot one, then a warm one or none).
using Clusters = std::map<std::string, std::vector<std::vector<uint32_t>>>;
Clusters read_clusters(const std::string& text) {
  Clusters out;
  const std::vector<std::string> lines = split_lines(text);
  EXPECT_FALSE(lines.empty());
  if (lines.empty()) return out;
  EXPECT_EQ(lines[0], "v1");
  std::string function;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with("f ")) {
      function = line.substr(2);
      EXPECT_FALSE(out.count(function)) << function << " listed twice";
      out[function];
    } else if (line.starts_with("c ")) {
      EXPECT_FALSE(function.empty()) << line;
      EXPECT_LT(out[function].size(), 2u) << function << ": a third cluster";
      std::vector<uint32_t>& cluster = out[function].emplace_back();
      std::istringstream ids(line.substr(2));
      for (uint32_t b; ids >> b;) cluster.push_back(b);
      EXPECT_FALSE(cluster.empty()) << line;
    } else {
      ADD_FAILURE() << "line " << i + 1 << ": " << line;
    }
  }
  return out;
}

// The clusters name the binary's address map's functions and their blocks, each once, the entry
// first.
void expect_clusters_of(const Clusters& clusters, const fs::path& binary) {
  const AddressMap map = read_address_map(binary);
  ASSERT_FALSE(map.empty());
  for (const auto& [function, parts] : clusters) {
    SCOPED_TRACE(function);
    ASSERT_TRUE(map.count(function)) << "not a function of the address map";
    const std::vector<std::vector<uint32_t>>& ranges = map.at(function);
    std::set<uint32_t> ids;
    for (const auto& r : ranges) ids.insert(r.begin(), r.end());
    ASSERT_FALSE(parts.empty());
    ASSERT_FALSE(parts.front().empty());
    EXPECT_EQ(parts.front().front(), ranges.front().front())
        << "the entry block begins the first cluster";
    std::set<uint32_t> seen;
    for (const auto& cluster : parts) {
      for (const uint32_t b : cluster) {
        EXPECT_TRUE(ids.count(b)) << "block " << b << " is not the function's";
        EXPECT_TRUE(seen.insert(b).second) << "block " << b << " listed twice";
      }
    }
  }
}

// The relinked binary's own map: each cluster is one range of its function, in our order, the
// first cluster the function's first range (the blocks left out lie in another: the cold part).
void expect_laid_out_as_clustered(const Clusters& clusters, const fs::path& relinked) {
  const AddressMap after = read_address_map(relinked);
  for (const auto& [function, parts] : clusters) {
    SCOPED_TRACE(function);
    ASSERT_TRUE(after.count(function));
    const std::vector<std::vector<uint32_t>>& ranges = after.at(function);
    EXPECT_EQ(ranges.front(), parts.front());
    for (size_t i = 1; i < parts.size(); ++i)
      EXPECT_NE(std::find(ranges.begin() + 1, ranges.end(), parts[i]), ranges.end())
          << "cluster " << i << " is not a range of the relinked function";
  }
}

// Compiles and links `arguments` (options and sources, in `cwd`) as the fixtures were built, with
// the profile in `profile`; clang-19 and ld.lld-19 must say nothing of it.
void relink_with(const fs::path& profile, const fs::path& output,
                 const std::vector<std::string>& arguments, const fs::path& cwd = {}) {
  std::vector<std::string> argv = {
      "clang-19",
      "-O2",
      "-fno-pie",
      "-no-pie",
      "-fuse-ld=lld",
      "-ffunction-sections",
      "-fbasic-block-sections=list=" + (profile / "propeller_cc_profile.txt").string(),
      "-fbasic-block-address-map",
      "-Wl,--symbol-ordering-file=" + (profile / "propeller_ld_profile.txt").string(),
      "-o",
      output.string()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  const CommandResult built = run_command(argv, {.cwd = cwd});
  ASSERT_EQ(built.exit_code, 0) << built.describe(argv);
  EXPECT_EQ(built.out + built.err, "") << "clang or lld said something of the profile";
}

class Propeller : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"clang-19", "ld.lld-19", "llvm-readobj-19"})
      if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
    propeller_set().require_ready();
    dir_ = propeller_set().status().dir;
  }
  fs::path fixture(const std::string& name) const { return dir_ / name; }

  // Our Propeller profile of the recording, in tmp_/NAME.
  fs::path convert(const std::string& data, const std::string& name) const {
    const fs::path out = tmp_ / name;
    const ProfcollectRun r =
        run_profcollect({"convert", "-q", "-p", fixture(data).string(), "--format", "propeller",
                         "-o", out.string(), fixture("interp_bbmap").string()});
    EXPECT_EQ(r.run.exit_code, 0) << r.describe();
    return out;
  }

  void expect_clusters_of_the_map(const Clusters& clusters) {
    expect_clusters_of(clusters, fixture("interp_bbmap"));
  }

  fs::path dir_;
  TempDir tmp_;
};

TEST_F(Propeller, ClangAndLldTakeTheProfileAndLayOutWhatItSays) {
  const fs::path out = convert("interp_bbmap.br.data", "br");
  const std::string cc = read_file(out / "propeller_cc_profile.txt");
  const std::string ld = read_file(out / "propeller_ld_profile.txt");
  const auto clusters = read_clusters(cc);
  // The program's hot functions (others are inlined into them).
  for (const char* hot : {"main", "run", "collatz_steps", "bits"})
    EXPECT_TRUE(clusters.count(hot)) << hot << " has no cluster:\n" << cc;
  expect_clusters_of_the_map(clusters);

  const auto meta = nlohmann::json::parse(read_file(out / "meta.json"));
  ASSERT_TRUE(meta.contains("propeller")) << meta.dump(2);
  EXPECT_EQ(meta["propeller"]["edges"], "branch_stacks");
  EXPECT_EQ(meta["propeller"]["functions"], clusters.size());
  EXPECT_GT(meta["propeller"]["branches_mapped"].get<uint64_t>(), 0u);

  // Relinked with the profile: no warning from clang or lld.
  const fs::path relinked = tmp_ / "relinked";
  ASSERT_NO_FATAL_FAILURE(relink_with(
      out, relinked, {(source_dir() / "tests/fixtures/inference_src/interp.c").string()}));

  const CommandResult original = run_command({fixture("interp_bbmap").string()});
  const CommandResult relaid = run_command({relinked.string()});
  EXPECT_EQ(original.exit_code, 0);
  EXPECT_EQ(relaid.exit_code, 0);
  EXPECT_EQ(relaid.out, original.out);

  ASSERT_NO_FATAL_FAILURE(expect_laid_out_as_clustered(clusters, relinked));
  // The recording's rarely run blocks make warm clusters (the unit tests say which).
  EXPECT_GT(meta["propeller"]["functions_with_warm_part"].get<uint64_t>(), 0u) << meta.dump(2);

  // The symbol order: hot parts in our order, then the warm and the cold parts, as the linker
  // placed them.
  const std::vector<std::string> order = split_lines(ld);
  ASSERT_FALSE(order.empty());
  const std::vector<std::string> nm_argv = {"llvm-nm-19", "-n", "--defined-only",
                                            relinked.string()};
  const CommandResult nm = run_command(nm_argv);
  ASSERT_EQ(nm.exit_code, 0) << nm.describe(nm_argv);
  std::map<std::string, size_t> placed;  // symbol -> its rank by address
  for (const std::string& line : split_lines(nm.out)) {
    const size_t space = line.rfind(' ');
    if (space != std::string::npos) placed.emplace(line.substr(space + 1), placed.size());
  }
  size_t previous = 0;
  bool first = true;
  for (const std::string& symbol : order) {
    SCOPED_TRACE(symbol);
    ASSERT_TRUE(placed.count(symbol)) << "the order names a symbol the program has not";
    if (!first) {
      EXPECT_GT(placed.at(symbol), previous) << "placed out of our order";
    }
    previous = placed.at(symbol);
    first = false;
    std::string function = symbol;
    for (const std::string suffix : {".cold", ".__part.1"})
      if (function.ends_with(suffix)) function.resize(function.size() - suffix.size());
    EXPECT_TRUE(clusters.count(function)) << "not a clustered function";
  }
}

// Each function of `name` in llvm-readobj-19 --bb-addr-map: its first range's address and
// block IDs.
std::vector<std::pair<uint64_t, std::vector<uint32_t>>> first_ranges_of(const fs::path& binary,
                                                                        const std::string& name) {
  const std::vector<std::string> argv = {"llvm-readobj-19", "--bb-addr-map", binary.string()};
  const CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
  std::vector<std::pair<uint64_t, std::vector<uint32_t>>> out;
  static const std::regex function_name("^\\s+Name: (\\S+)$");
  static const std::regex base("^\\s+Base Address: (0x[0-9A-Fa-f]+)$");
  static const std::regex id("^\\s+ID: (\\d+)$");
  bool wanted = false, first = false, collecting = false;
  for (const std::string& line : split_lines(r.out)) {
    std::smatch m;
    if (std::regex_match(line, m, function_name)) {
      wanted = m[1] == name;
      first = true;
      collecting = false;
    } else if (wanted && std::regex_match(line, m, base)) {
      collecting = first;
      if (first) out.emplace_back(std::stoull(m[1].str(), nullptr, 16), std::vector<uint32_t>{});
      first = false;
    } else if (collecting && std::regex_match(line, m, id)) {
      out.back().second.push_back(static_cast<uint32_t>(std::stoul(m[1])));
    }
  }
  return out;
}

TEST_F(Propeller, StaticFunctionsOfOneNameAreToldApartByTheirCompileUnits) {
  if (!have_executable("llvm-symbolizer-19")) GTEST_SKIP() << "llvm-symbolizer-19 is not installed";
  const fs::path out = tmp_ / "same";
  const ProfcollectRun r = run_profcollect(
      {"convert", "-q", "-p", fixture("same_name_bbmap.br.data").string(), "--format", "propeller",
       "-o", out.string(), fixture("same_name_bbmap").string()});
  ASSERT_EQ(r.run.exit_code, 0) << r.describe();
  const std::string cc = read_file(out / "propeller_cc_profile.txt");
  const std::string ld = read_file(out / "propeller_ld_profile.txt");

  // Both `walk`s ran: each has its clusters under the module its unit is named by; the first,
  // its hot one, is what the relinked function's first range holds.
  std::map<std::string, std::vector<uint32_t>> walks;  // module -> hot cluster
  std::string module, function_module, function;
  bool first_cluster = false;
  for (const std::string& line : split_lines(cc)) {
    if (line.starts_with("m ")) {
      module = line.substr(2);
    } else if (line.starts_with("f ")) {
      function = line.substr(2);
      function_module = std::exchange(module, {});
      first_cluster = true;
    } else if (line.starts_with("c ") && function == "walk" && first_cluster) {
      EXPECT_FALSE(walks.count(function_module)) << cc;
      std::istringstream ids(line.substr(2));
      for (uint32_t b; ids >> b;) walks[function_module].push_back(b);
      first_cluster = false;
    } else if (line.starts_with("c ")) {
      first_cluster = false;
    }
  }
  ASSERT_EQ(walks.size(), 2u) << cc;
  EXPECT_TRUE(walks.count("propeller_same_name_a.c")) << cc;
  EXPECT_TRUE(walks.count("propeller_same_name_b.c")) << cc;
  const std::vector<std::string> order = split_lines(ld);
  EXPECT_EQ(std::count(order.begin(), order.end(), "walk"), 1) << ld;
  const auto meta = nlohmann::json::parse(read_file(out / "meta.json"));
  EXPECT_EQ(meta["propeller"]["functions_named_by_module"], 2) << meta.dump(2);
  EXPECT_EQ(meta["propeller"]["functions_unnamed"], 0) << meta.dump(2);

  // Compiled again where the fixture was (so the units have the same names) with the profile:
  // clang and lld say nothing, and each `walk`'s hot range holds the cluster of its own file, as
  // llvm-symbolizer-19 names the file of the function's start.
  const fs::path src = source_dir() / "tests/fixtures/inference_src";
  const fs::path relinked = tmp_ / "same_relinked";
  ASSERT_NO_FATAL_FAILURE(relink_with(
      out, relinked,
      {"-g", "propeller_same_name_main.c", "propeller_same_name_a.c", "propeller_same_name_b.c"},
      src));
  const CommandResult original = run_command({fixture("same_name_bbmap").string()});
  const CommandResult relaid = run_command({relinked.string()});
  EXPECT_EQ(relaid.exit_code, 0);
  EXPECT_EQ(relaid.out, original.out);

  const auto ranges = first_ranges_of(relinked, "walk");
  ASSERT_EQ(ranges.size(), 2u);
  for (const auto& [address, ids] : ranges) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(address));
    SCOPED_TRACE(hex);
    const std::vector<std::string> sym = {"llvm-symbolizer-19", "--obj=" + relinked.string(), hex};
    const CommandResult where = run_command(sym);
    ASSERT_EQ(where.exit_code, 0) << where.describe(sym);
    const std::vector<std::string> lines = split_lines(where.out);
    ASSERT_GE(lines.size(), 2u) << where.out;
    EXPECT_EQ(lines[0], "walk");
    const std::string file = fs::path(lines[1].substr(0, lines[1].find(':'))).filename().string();
    ASSERT_TRUE(walks.count(file)) << lines[1];
    EXPECT_EQ(ids, walks.at(file));
  }
}

TEST_F(Propeller, WithoutBranchStacksTheEdgesAreInferredFromIpSamples) {
  const fs::path out = convert("interp_bbmap.ip.data", "ip");
  const auto clusters = read_clusters(read_file(out / "propeller_cc_profile.txt"));
  for (const char* hot : {"main", "run", "collatz_steps"})
    EXPECT_TRUE(clusters.count(hot)) << hot << " has no cluster";
  expect_clusters_of_the_map(clusters);
  const auto meta = nlohmann::json::parse(read_file(out / "meta.json"));
  EXPECT_EQ(meta["propeller"]["edges"], "ip_samples");
  EXPECT_GT(meta["propeller"]["sample_share"].get<double>(), 0.9);
}

// Live collection (`-- CMD --format propeller`) writes both files at its flush, from the IP
// samples here (no branch stacks on a machine without LBR), and merge makes them again from the
// summed samples with the binary.
TEST_F(Propeller, LiveCollectionWritesItAndMergeMakesItAgain) {
  std::vector<fs::path> inputs;
  for (const char* name : {"live1", "live2"}) {
    const fs::path out = tmp_ / name;
    // 400000 rounds: about a second of the interpreter, some 2000 samples at 4000 Hz, most of them
    // in its loop (run).
    const ProfcollectRun r = run_profcollect({"-q", "-o", out.string(), "--format", "propeller",
                                              "--", fixture("interp_bbmap").string(), "400000"});
    ASSERT_EQ(r.run.exit_code, 0) << r.describe();
    inputs.push_back(out);
  }
  const ProfcollectRun merged = run_profcollect(
      {"merge", "-o", (tmp_ / "merged").string(), inputs[0].string(), inputs[1].string()});
  ASSERT_EQ(merged.run.exit_code, 0) << merged.describe();
  EXPECT_EQ(merged.run.err.find("warning"), std::string::npos) << merged.run.err;
  for (const fs::path& out : {inputs[0], inputs[1], tmp_ / "merged"}) {
    SCOPED_TRACE(out.string());
    fs::path dir;
    for (const auto& entry : fs::directory_iterator(out))
      if (entry.path().filename().string().starts_with("interp_bbmap-")) dir = entry.path();
    ASSERT_FALSE(dir.empty()) << "no directory of the interpreter";
    const auto clusters = read_clusters(read_file(dir / "propeller_cc_profile.txt"));
    EXPECT_TRUE(clusters.count("run")) << "the interpreter's loop has no cluster";
    expect_clusters_of_the_map(clusters);
    EXPECT_FALSE(read_file(dir / "propeller_ld_profile.txt").empty());
    const auto meta = nlohmann::json::parse(read_file(dir / "meta.json"));
    EXPECT_EQ(meta["propeller"]["edges"], "ip_samples");
    const auto formats = meta["formats"].get<std::vector<std::string>>();
    EXPECT_NE(std::find(formats.begin(), formats.end(), "propeller_ld_profile.txt"), formats.end());
    // `report` says what the profile covers, as meta.json has it.
    const ProfcollectRun report = run_profcollect({"report", out.string()});
    ASSERT_EQ(report.run.exit_code, 0) << report.describe();
    EXPECT_NE(
        report.run.out.find(
            "  propeller: " + std::to_string(meta["propeller"]["functions"].get<uint64_t>()) +
            " functions clustered (" + std::to_string(meta["propeller"]["blocks"].get<uint64_t>()) +
            " blocks, " + std::to_string(meta["propeller"]["warm_blocks"].get<uint64_t>()) +
            " of them warm; " +
            std::to_string(meta["propeller"]["functions_with_warm_part"].get<uint64_t>()) +
            " functions with a warm part, "),
        std::string::npos)
        << report.run.out;
    EXPECT_NE(report.run.out.find("edges from the IP samples (inferred)"), std::string::npos)
        << report.run.out;
  }
}

// Live collection goes on without the format for a binary built without the map, and says why
// in its meta.json.
TEST_F(Propeller, LiveCollectionSaysWhyABinaryWithoutTheMapHasNone) {
  const fs::path out = tmp_ / "plain";
  const ProfcollectRun r = run_profcollect({"-q", "-o", out.string(), "--format", "propeller,bolt",
                                            "--", fixture("interp_plain").string(), "400000"});
  ASSERT_EQ(r.run.exit_code, 0) << r.describe();
  fs::path dir;
  for (const auto& entry : fs::directory_iterator(out))
    if (entry.path().filename().string().starts_with("interp_plain-")) dir = entry.path();
  ASSERT_FALSE(dir.empty()) << "no directory of the program";
  EXPECT_TRUE(fs::exists(dir / "bolt.fdata"));
  EXPECT_FALSE(fs::exists(dir / "propeller_cc_profile.txt"));
  EXPECT_FALSE(fs::exists(dir / "propeller_ld_profile.txt"));
  const auto meta = nlohmann::json::parse(read_file(dir / "meta.json"));
  ASSERT_TRUE(meta.contains("formats_not_written")) << meta.dump(2);
  EXPECT_NE(
      meta["formats_not_written"]["propeller"].get<std::string>().find("-fbasic-block-address-map"),
      std::string::npos)
      << meta.dump(2);
}

TEST_F(Propeller, BinaryWithoutAddressMapIsRefusedSayingHowToBuildIt) {
  // Refused before the recording is read: it holds none of this binary's samples.
  const ProfcollectRun r = run_profcollect(
      {"convert", "-q", "-p", fixture("interp_bbmap.br.data").string(), "--format", "propeller",
       "-o", (tmp_ / "plain").string(), fixture("interp_plain").string()});
  EXPECT_NE(r.run.exit_code, 0) << r.describe();
  EXPECT_NE(r.run.err.find("-fbasic-block-address-map"), std::string::npos) << r.run.err;
  EXPECT_NE(r.run.err.find("interp_plain"), std::string::npos) << r.run.err;
  EXPECT_FALSE(fs::exists(tmp_ / "plain" / "propeller_cc_profile.txt"));
}

}  // namespace
}  // namespace profcollect::test

namespace profcollect::test {
namespace {

FixtureSet& propeller_kernel_set() {
  static FixtureSet set({.name = "propeller_kernel",
                         .script = "make_propeller_kernel_fixtures.sh",
                         .arguments = {PROFCOLLECT_BRANCH_RECORDER},
                         .source_folder = "kernel_src",
                         .other_inputs = {PROFCOLLECT_BRANCH_RECORDER}});
  return set;
}
[[maybe_unused]] const bool propeller_kernel_set_registered =
    register_fixture_set(&propeller_kernel_set);

// The kernel's Propeller build (Documentation/dev-tools/propeller.rst) takes
// CLANG_PROPELLER_PROFILE_PREFIX=DIR/propeller: DIR/propeller_cc_profile.txt and
// DIR/propeller_ld_profile.txt. A stand-in vmlinux built with the address map, its kernel branch
// samples converted as a kernel's; its code compiled again with the clusters and linked by
// ld.lld-19 with the order, by the stand-in's linker script.
TEST(PropellerKernel, StandInVmlinuxGetsThePrefixedFilesThatClangAndLldTake) {
  for (const char* tool : {"clang-19", "ld.lld-19", "llvm-readobj-19"})
    if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
  propeller_kernel_set().require_ready();
  const fs::path dir = propeller_kernel_set().status().dir;
  TempDir tmp;
  const fs::path out = tmp / "out";
  const ProfcollectRun r =
      run_profcollect({"convert", "-q", "--kernel", "-p", (dir / "kernel_branch.data").string(),
                       "--format", "propeller", "-o", out.string(), (dir / "vmlinux").string()});
  ASSERT_EQ(r.run.exit_code, 0) << r.describe();
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"out"});
  const fs::path prefix = out / "propeller";
  const std::string cc = read_file(prefix.string() + "_cc_profile.txt");
  const std::string ld = read_file(prefix.string() + "_ld_profile.txt");
  const auto clusters = read_clusters(cc);
  for (const char* hot : {"vfs_step", "sched_pick"})
    EXPECT_TRUE(clusters.count(hot)) << hot << " has no cluster:\n" << cc;
  expect_clusters_of(clusters, dir / "vmlinux");
  const auto meta = nlohmann::json::parse(read_file(out / "meta.json"));
  EXPECT_EQ(meta["propeller"]["edges"], "branch_stacks");

  const fs::path src = source_dir() / "tests/fixtures/kernel_src";
  const fs::path object = tmp / "kernel.o", relinked = tmp / "vmlinux.propeller";
  const std::vector<std::string> compile = {
      "clang-19",
      "-O2",
      "-fbasic-block-address-map",
      "-ffunction-sections",
      "-fbasic-block-sections=list=" + prefix.string() + "_cc_profile.txt",
      "-fPIE",
      "-ffreestanding",
      "-fno-builtin",
      "-fno-stack-protector",
      "-fcf-protection=none",
      "-mno-red-zone",
      "-fno-asynchronous-unwind-tables",
      "-c",
      (src / "kernel_autofdo.c").string(),
      "-o",
      object.string()};
  const CommandResult compiled = run_command(compile);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.describe(compile);
  EXPECT_EQ(compiled.out + compiled.err, "") << "clang said something of the profile";
  const std::vector<std::string> link = {
      "ld.lld-19",
      "-static",
      "-T",
      (src / "kernel_autofdo.ld").string(),
      "--defsym",
      "IMAGE_BASE=0xffffffff81000000",
      "--symbol-ordering-file=" + prefix.string() + "_ld_profile.txt",
      "-o",
      relinked.string(),
      object.string()};
  const CommandResult linked = run_command(link);
  ASSERT_EQ(linked.exit_code, 0) << linked.describe(link);
  EXPECT_EQ(linked.out + linked.err, "") << "ld.lld said something of the order";
  ASSERT_NO_FATAL_FAILURE(expect_laid_out_as_clustered(clusters, relinked));
  EXPECT_FALSE(split_lines(ld).empty());
}

}  // namespace
}  // namespace profcollect::test
