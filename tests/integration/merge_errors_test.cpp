// `profcollect merge` refusing what it cannot merge: an input that is not an output directory, a
// damaged file (named with its line), two hosts' directories of one name that disagree on the
// build-id. Each is exit 1 with a message naming the file; the output's earlier profile stays
// byte for byte and nothing else is written. Usage errors are exit 2. The inputs are written by
// the test in the output layout (docs/usage.md, "Output"): small, so that each damage is exact.
#include <gtest/gtest.h>

#include "tests/integration/merge_judges.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

const std::string kBuildId = "0123456789abcdef0123456789abcdef01234567";
const std::string kOtherBuildId = "fedcba9876543210fedcba9876543210fedcba98";

// A host's output directory with one binary directory "prog-<build-id>" holding meta.json and a
// no_lbr bolt.fdata of `count` samples at main+0x10.
fs::path make_host(const fs::path& root, const std::string& build_id, uint64_t count,
                   const std::string& dir_id = kBuildId) {
  const fs::path binary = root / ("prog-" + dir_id);
  fs::create_directories(binary);
  const nlohmann::ordered_json meta = {
      {"path", "/usr/bin/prog"}, {"build_id", build_id},   {"samples", count},
      {"first_sample_ns", 1000}, {"last_sample_ns", 2000}, {"event", "cpu-clock"},
      {"events", {"cpu-clock"}}, {"bolt_fdata", "no_lbr"}, {"formats", {"bolt.fdata"}}};
  write_file(binary / "meta.json", meta.dump(2) + "\n");
  write_file(binary / "bolt.fdata", "no_lbr cpu-clock:\n1 main 10 " + std::to_string(count) + "\n");
  write_file(root / "collection.json", "{}\n");
  return root;
}

// The output directory's files and their contents, to see that a refused merge changed nothing.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  if (!fs::exists(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    files[fs::relative(e.path(), dir).string()] =
        e.is_regular_file() ? read_file(e.path()) : "<dir>";
  }
  return files;
}

class MergeErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = make_host(tmp_ / "good", kBuildId, 5);
    // An earlier merge in the output, which a refused merge must leave as it is.
    const ProfcollectRun first = run_merge(out_, {good_});
    ASSERT_EQ(first.run.exit_code, 0) << first.describe();
    before_ = snapshot(out_);
    ASSERT_FALSE(before_.empty());
  }
  // Merging `bad` with the good host fails with exit 1 and a message holding every `needles`.
  void expect_refused(const fs::path& bad, const std::vector<std::string>& needles) {
    const ProfcollectRun run = run_merge(out_, {good_, bad});
    EXPECT_EQ(run.run.exit_code, 1) << run.describe();
    for (const auto& needle : needles)
      EXPECT_NE(run.run.err.find(needle), std::string::npos) << needle << "\n" << run.describe();
    EXPECT_EQ(snapshot(out_), before_) << "a refused merge changed the output";
  }
  TempDir tmp_;
  fs::path good_, out_ = tmp_ / "out";
  std::map<std::string, std::string> before_;
};

TEST_F(MergeErrorsTest, InputThatIsNotAnOutputDirectoryIsRefused) {
  expect_refused(tmp_ / "missing", {(tmp_ / "missing").string(), "no such directory"});
  write_file(tmp_ / "file", "x\n");
  expect_refused(tmp_ / "file", {(tmp_ / "file").string(), "not a directory"});
  fs::create_directories(tmp_ / "empty");
  expect_refused(tmp_ / "empty", {(tmp_ / "empty").string(), "no profcollect output"});
  expect_refused(good_, {good_.string(), "given twice"});
  fs::create_directories(tmp_ / "other" / "photos");
  expect_refused(tmp_ / "other",
                 {(tmp_ / "other" / "photos" / "meta.json").string(), "not a profcollect"});
}

TEST_F(MergeErrorsTest, DamagedFileIsNamedWithItsLine) {
  const fs::path bad = tmp_ / "bad", binary = bad / ("prog-" + kBuildId);
  const auto fresh = [&] {
    fs::remove_all(bad);
    make_host(bad, kBuildId, 7);
  };
  fresh();
  write_file(binary / "bolt.fdata", "no_lbr cpu-clock:\n1 main 10 7\n1 main zz 3\n");
  expect_refused(bad, {(binary / "bolt.fdata").string(), "line 3"});

  fresh();
  write_file(binary / "samples.ip", "401000 3\n401004 three\n");
  expect_refused(bad, {(binary / "samples.ip").string(), "line 2"});

  fresh();
  write_file(binary / "autofdo.prof", "main:100:1\n 1: 50\n 2 60\n");
  expect_refused(bad, {(binary / "autofdo.prof").string(), "line 3"});

  fresh();
  write_file(binary / "meta.json", "{\"path\": \"/usr/bin/prog\", ");
  expect_refused(bad, {(binary / "meta.json").string(), "not a JSON object"});
}

TEST_F(MergeErrorsTest, SameDirectoryWithAnotherBuildIdIsRefused) {
  // The directory's name says kBuildId, its meta.json another binary.
  const fs::path other = make_host(tmp_ / "other", kOtherBuildId, 3);
  expect_refused(other,
                 {(other / ("prog-" + kBuildId) / "meta.json").string(), kOtherBuildId, kBuildId});
}

TEST_F(MergeErrorsTest, UsageErrorsAreExitTwo) {
  const ProfcollectRun no_input = run_profcollect({"merge", "-o", out_.string()});
  EXPECT_EQ(no_input.run.exit_code, 2) << no_input.describe();
  const ProfcollectRun no_output = run_profcollect({"merge", good_.string()});
  EXPECT_EQ(no_output.run.exit_code, 2) << no_output.describe();
  EXPECT_EQ(snapshot(out_), before_);
}

}  // namespace
}  // namespace profcollect::test
