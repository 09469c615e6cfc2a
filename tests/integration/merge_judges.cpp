#include "tests/integration/merge_judges.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "tests/integration/live_support.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {

namespace fs = std::filesystem;

ProfcollectRun run_merge(const fs::path& out, const std::vector<fs::path>& inputs) {
  std::vector<std::string> args = {"merge", "-o", out.string()};
  for (const auto& input : inputs) args.push_back(input.string());
  return run_profcollect(args);
}

std::string llvm_profdata_merge(const std::vector<fs::path>& profiles, const fs::path& out) {
  std::vector<std::string> argv = {"llvm-profdata-19", "merge", "--sample", "--text"};
  for (const auto& p : profiles) argv.push_back(p.string());
  argv.insert(argv.end(), {"-o", out.string()});
  const CommandResult run = run_command(argv);
  EXPECT_EQ(run.exit_code, 0) << run.describe(argv);
  return run.exit_code == 0 ? read_file(out) : std::string();
}

std::map<uint64_t, uint64_t> read_ip_samples(const fs::path& path) {
  std::map<uint64_t, uint64_t> counts;
  for (const std::string& line : split_lines(read_file(path))) {
    std::istringstream in(line);
    std::string address, count, extra;
    in >> address >> count;
    const bool ok = !address.empty() && !count.empty() && !(in >> extra) &&
                    address.find_first_not_of("0123456789abcdef") == std::string::npos &&
                    count.find_first_not_of("0123456789") == std::string::npos;
    EXPECT_TRUE(ok) << path << ": malformed line '" << line << "'";
    if (ok) counts[std::stoull(address, nullptr, 16)] += std::stoull(count);
  }
  return counts;
}

NamedSiteCounts summed_no_lbr(const std::vector<fs::path>& files) {
  NamedSiteCounts sum;
  for (const auto& file : files) {
    const NoLbrFdata fdata = parse_no_lbr_fdata(read_file(file));
    EXPECT_TRUE(fdata.malformed_lines.empty()) << file << ": " << fdata.malformed_lines.front();
    EXPECT_TRUE(fdata.header.starts_with("no_lbr")) << file << ": no no_lbr header";
    for (const auto& [site, count] : fdata.counts) sum[site] += count;
  }
  return sum;
}

fs::path only_binary_dir(const fs::path& out, const std::string& basename) {
  const auto dirs = profile_dirs(out, basename);
  EXPECT_EQ(dirs.size(), 1u) << out << ": directories of " << basename;
  return dirs.empty() ? out / "missing" : dirs.front();
}

ExpectedMeta expected_meta(const std::vector<nlohmann::json>& metas) {
  ExpectedMeta e;
  for (const auto& meta : metas) {
    e.samples += meta.at("samples").get<uint64_t>();
    e.branch_stacks += meta.value("branch_stacks", uint64_t{0});
    const uint64_t first = meta.at("first_sample_ns").get<uint64_t>();
    if (first != 0 && (e.first_sample_ns == 0 || first < e.first_sample_ns))
      e.first_sample_ns = first;
    e.last_sample_ns = std::max(e.last_sample_ns, meta.at("last_sample_ns").get<uint64_t>());
    for (const auto& event : meta.at("events")) {
      const std::string name = event.get<std::string>();
      if (std::find(e.events.begin(), e.events.end(), name) == e.events.end())
        e.events.push_back(name);
    }
  }
  return e;
}

}  // namespace profcollect::test
