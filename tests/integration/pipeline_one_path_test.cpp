// One path: the records of a recording through `profcollect convert` and through the live
// collection session (its pipeline, profile store and renderer, the recording replayed instead
// of read from ring buffers) give byte-identical profiles in every format. Recordings of IP
// samples (the convert fixtures) and of branch stacks (the branch fixtures), for programs and
// shared libraries. What the profiles are worth is judged elsewhere (perf2bolt, llvm-profgen);
// here the two ways must not diverge.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/branch_fixtures.h"
#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"
#include "tests/integration/replay_session.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

// The binary's directory in a live output directory (the only one).
fs::path binary_dir_in(const fs::path& out) {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(out)) {
    if (e.is_directory()) dirs.push_back(e.path());
  }
  EXPECT_EQ(dirs.size(), 1u) << out;
  return dirs.empty() ? out : dirs.front();
}

void expect_one_path(const fs::path& data, const fs::path& binary, const std::string& formats,
                     const std::vector<std::string>& files, const fs::path& dir) {
  const fs::path converted = dir / "convert", live = dir / "live";
  const std::vector<std::string> argv = {profcollect_exe().string(),
                                         "convert",
                                         "-q",
                                         "-p",
                                         data.string(),
                                         "--format",
                                         formats,
                                         "-o",
                                         converted.string(),
                                         binary.string()};
  auto r = run_command(argv);
  ASSERT_EQ(r.exit_code, 0) << r.describe(argv);

  ReplayResult replay = replay_into(data, live, {binary.string()}, /*unsymbolized=*/true);
  for (const auto& w : replay.warnings) ADD_FAILURE() << w;
  const fs::path bdir = binary_dir_in(live);
  for (const std::string& name : files) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(fs::exists(converted / name)) << converted / name;
    ASSERT_TRUE(fs::exists(bdir / name)) << bdir / name;
    const std::string a = read_file(converted / name), b = read_file(bdir / name);
    EXPECT_GT(a.size(), 20u) << "too little to compare";
    EXPECT_EQ(a, b) << line_differences(sorted_lines(a), sorted_lines(b));
  }
  // Both describe the same samples, in the one meta.json schema.
  auto ma = nlohmann::json::parse(read_file(converted / "meta.json"));
  auto mb = nlohmann::json::parse(read_file(bdir / "meta.json"));
  EXPECT_EQ(ma.at("samples"), mb.at("samples"));
  EXPECT_EQ(ma.at("build_id"), mb.at("build_id"));
  EXPECT_EQ(ma.at("events"), mb.at("events"));
  EXPECT_EQ(ma.at("bolt_fdata"), mb.at("bolt_fdata"));
  EXPECT_EQ(ma.value("unsymbolized", ""), mb.value("unsymbolized", ""));
  std::vector<std::string> keys_a, keys_b;
  for (const auto& [k, v] : ma.items()) keys_a.push_back(k);
  for (const auto& [k, v] : mb.items()) keys_b.push_back(k);
  keys_a.erase(std::remove(keys_a.begin(), keys_a.end(), "input"), keys_a.end());
  EXPECT_EQ(keys_a, keys_b) << "one schema";
}

struct IpCase {
  const char* data;
  const char* binary;
};

class OnePathConvertFixtures : public ConvertFixtureTest,
                               public ::testing::WithParamInterface<IpCase> {};

TEST_P(OnePathConvertFixtures, IpSamplesGiveIdenticalProfilesBothWays) {
  TempDir dir;
  expect_one_path(fixture(GetParam().data), fixture(GetParam().binary),
                  "bolt,bolt-inferred,autofdo,unsymbolized",
                  {"bolt.fdata", "bolt.inferred.preagg", "autofdo.prof", "autofdo.unsym"},
                  dir.path());
}

INSTANTIATE_TEST_SUITE_P(
    Recordings, OnePathConvertFixtures,
    ::testing::Values(IpCase{"hot_clang.data", "hot_clang"}, IpCase{"hot_gcc.data", "hot_gcc"},
                      IpCase{"dup.data", "dup"}, IpCase{"lib.data", "libwork.so"},
                      IpCase{"two.data", "hot_gcc"}),
    [](const ::testing::TestParamInfo<IpCase>& info) {
      std::string name = std::string(info.param.data) + "_" + info.param.binary;
      for (char& c : name) {
        if (c == '.') c = '_';
      }
      return name;
    });

class OnePathBranchFixtures : public BranchFixtureTest,
                              public ::testing::WithParamInterface<BranchCase> {};

TEST_P(OnePathBranchFixtures, BranchStacksGiveIdenticalProfilesBothWays) {
  TempDir dir;
  expect_one_path(
      fixture(GetParam().data), fixture(GetParam().binary),
      "bolt,preagg,bolt-inferred,autofdo,unsymbolized",
      {"bolt.fdata", "bolt.preagg", "bolt.inferred.preagg", "autofdo.prof", "autofdo.unsym"},
      dir.path());
}

INSTANTIATE_TEST_SUITE_P(Recordings, OnePathBranchFixtures, ::testing::ValuesIn(branch_cases()),
                         branch_case_name);

}  // namespace
}  // namespace profcollect::test
