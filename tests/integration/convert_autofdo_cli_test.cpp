// `profcollect convert --format autofdo|unsymbolized|bolt,...` and live autofdo.prof, through the
// command line, judged by llvm-profgen-19 and llvm-profdata-19 (oracles.md).
#include <gtest/gtest.h>

#include "tests/integration/autofdo_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

class ConvertAutofdoCli : public AutofdoFixtureTest {
 protected:
  std::string reference_ip_profile(const TempDir& dir) {
    fs::path script = dir / "ip.perfscript";
    write_file(script, ip_perf_script(fixture("hot_dwarf5.data")));
    return normalize_profile(
        run_llvm_profgen({"--perfscript=" + script.string(),
                          "--binary=" + fixture("hot_dwarf5").string(), "--leading-ip-only"},
                         dir.path()),
        dir.path());
  }
};

TEST_F(ConvertAutofdoCli, AutofdoEqualsLlvmProfgenLeadingIpOnly) {
  TempDir dir;
  fs::path out = dir / "our.prof";
  std::vector<std::string> argv = {profcollect_exe().string(),
                                   "convert",
                                   "-q",
                                   "-p",
                                   fixture("hot_dwarf5.data").string(),
                                   "--format",
                                   "autofdo",
                                   "-o",
                                   out.string(),
                                   fixture("hot_dwarf5").string()};
  auto r = run_command(argv);
  ASSERT_EQ(r.exit_code, 0) << r.describe(argv);
  std::string ours = normalize_profile(read_file(out), dir.path());
  std::string reference = reference_ip_profile(dir);
  ASSERT_FALSE(reference.empty());
  EXPECT_EQ(profile_difference(ours, reference), "");
}

TEST_F(ConvertAutofdoCli, SeveralFormatsGoToADirectoryAndTheUnsymbolizedOneRoundTrips) {
  TempDir dir;
  fs::path out = dir / "profiles";
  std::vector<std::string> argv = {profcollect_exe().string(),
                                   "convert",
                                   "-q",
                                   "-p",
                                   fixture("hot_dwarf5.data").string(),
                                   "--format",
                                   "bolt,autofdo,unsymbolized",
                                   "-o",
                                   out.string(),
                                   fixture("hot_dwarf5").string()};
  auto r = run_command(argv);
  ASSERT_EQ(r.exit_code, 0) << r.describe(argv);
  for (const char* f : {"bolt.fdata", "autofdo.prof", "autofdo.unsym", "meta.json"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f;
  }
  // The same BOLT profile as the single-format command writes.
  fs::path single = dir / "single.fdata";
  std::vector<std::string> bolt_argv = {profcollect_exe().string(),
                                        "convert",
                                        "-q",
                                        "-p",
                                        fixture("hot_dwarf5.data").string(),
                                        "-o",
                                        single.string(),
                                        fixture("hot_dwarf5").string()};
  ASSERT_EQ(run_command(bolt_argv).exit_code, 0);
  EXPECT_EQ(read_file(out / "bolt.fdata"), read_file(single));
  std::string meta = read_file(out / "meta.json");
  EXPECT_NE(meta.find("\"unsymbolized\": \"ip-samples\""), std::string::npos) << meta;
  // llvm-profgen symbolizes our unsymbolized file into the same profile as from perf script.
  std::string from_unsym = normalize_profile(
      run_llvm_profgen({"--unsymbolized-profile=" + (out / "autofdo.unsym").string(),
                        "--binary=" + fixture("hot_dwarf5").string(), "--leading-ip-only"},
                       dir.path()),
      dir.path());
  EXPECT_EQ(profile_difference(from_unsym, reference_ip_profile(dir)), "");
}

TEST_F(ConvertAutofdoCli, NoDebugInfoStillWritesBoltAndNamesTheBuildId) {
  TempDir dir;
  fs::path stripped = dir / "hot_dwarf5";
  auto s = run_command({"strip", "-o", stripped.string(), fixture("hot_dwarf5").string()});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  fs::path out = dir / "profiles";
  std::vector<std::string> argv = {profcollect_exe().string(),
                                   "convert",
                                   "-q",
                                   "--ignore-build-id",
                                   "-p",
                                   fixture("hot_dwarf5.data").string(),
                                   "--format",
                                   "bolt,autofdo",
                                   "-o",
                                   out.string(),
                                   stripped.string()};
  auto r = run_command(argv);
  EXPECT_EQ(r.exit_code, 1) << r.describe(argv);
  EXPECT_TRUE(fs::exists(out / "bolt.fdata"));
  EXPECT_FALSE(fs::exists(out / "autofdo.prof"));
  EXPECT_NE(r.err.find("build-id"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/usr/lib/debug"), std::string::npos) << r.err;
}

TEST_F(ConvertAutofdoCli, LiveCollectionWritesAutofdoAndUnsymbolizedProfilesThatAgree) {
  TempDir dir;
  fs::path out = dir / "out";
  std::vector<std::string> argv = {
      profcollect_exe().string(),    "-q", "--unsymbolized", "-o", out.string(), "--",
      fixture("hot_dwarf5").string()};
  auto r = run_command(argv);
  ASSERT_EQ(r.exit_code, 0) << r.describe(argv);
  fs::path prof;
  for (const auto& e : fs::directory_iterator(out)) {
    if (e.is_directory() && fs::exists(e.path() / "autofdo.prof")) prof = e.path() / "autofdo.prof";
  }
  ASSERT_FALSE(prof.empty()) << "no autofdo.prof under " << out;
  auto m = run_command({"llvm-profdata-19", "merge", "--sample", "--extbinary", prof.string(), "-o",
                        (dir / "x.afdo").string()});
  EXPECT_EQ(m.exit_code, 0) << m.err;
  std::string ours = normalize_profile(read_file(prof), dir.path());
  EXPECT_FALSE(ours.empty());
  // The unsymbolized file of the same samples, symbolized by llvm-profgen, gives our profile.
  fs::path unsym = prof.parent_path() / "autofdo.unsym";
  ASSERT_TRUE(fs::exists(unsym));
  EXPECT_NE(read_file(prof.parent_path() / "meta.json").find("ip-samples"), std::string::npos);
  std::string theirs = normalize_profile(
      run_llvm_profgen({"--unsymbolized-profile=" + unsym.string(),
                        "--binary=" + fixture("hot_dwarf5").string(), "--leading-ip-only"},
                       dir.path()),
      dir.path());
  EXPECT_EQ(profile_difference(ours, theirs), "");
}

}  // namespace
}  // namespace profcollect::test
