// Acceptance 4: llvm-bolt accepts every profile we write and finds in it as many profiled
// functions as in perf2bolt's profile (where perf2bolt maps the binary) or, for the seed
// binaries that perf2bolt cannot map, as many as perf script sees samples in.
#include <gtest/gtest.h>

#include <set>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"

namespace profcollect::test {
namespace {

class ConvertBoltAcceptsTest : public ConvertFixtureTest {
 protected:
  void SetUp() override {
    ConvertFixtureTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (tool_missing(kLlvmBolt)) GTEST_SKIP() << kLlvmBolt << " is not installed";
    if (tool_missing(kPerf2Bolt)) GTEST_SKIP() << kPerf2Bolt << " is not installed";
  }

  // Our fdata for `binary`, run through llvm-bolt; returns its profiled-function count.
  std::optional<uint64_t> profiled_with_our_fdata(const std::string& data_name,
                                                  const std::string& binary_name) {
    const auto fdata = tmp_ / (binary_name + ".ours.fdata");
    const ProfcollectRun ours =
        run_profcollect({"convert", "-p", fixture(data_name).string(), "-o", fdata.string(), "-nl",
                         fixture(binary_name).string()});
    EXPECT_EQ(ours.run.exit_code, 0) << ours.describe();
    if (ours.run.exit_code != 0) return std::nullopt;
    return profiled_by_bolt(binary_name, fdata);
  }

  std::optional<uint64_t> profiled_by_bolt(const std::string& binary_name,
                                           const std::filesystem::path& fdata) {
    const BoltRun bolt =
        run_llvm_bolt(fixture(binary_name), fdata, tmp_ / (fdata.filename().string() + ".bolt"));
    EXPECT_EQ(bolt.run.exit_code, 0)
        << "llvm-bolt rejects " << fdata.filename() << ": " << bolt.run.describe(bolt.argv) << "\n"
        << read_file(fdata);
    EXPECT_TRUE(bolt.profiled_functions) << "no profile summary: " << bolt.run.describe(bolt.argv);
    return bolt.profiled_functions;
  }

  // For binaries perf2bolt maps: same count with perf2bolt's fdata as with ours.
  void expect_same_as_with_perf2bolt(const std::string& data_name, const std::string& binary_name) {
    const auto reference_fdata = tmp_ / (binary_name + ".perf2bolt.fdata");
    const Perf2BoltRun reference =
        run_perf2bolt(fixture(data_name), fixture(binary_name), reference_fdata);
    ASSERT_EQ(reference.run.exit_code, 0) << reference.run.describe(reference.argv);
    const auto expected = profiled_by_bolt(binary_name, reference_fdata);
    ASSERT_TRUE(expected);
    ASSERT_GT(*expected, 0u) << "perf2bolt maps nothing here, so it cannot be the reference";
    const auto actual = profiled_with_our_fdata(data_name, binary_name);
    ASSERT_TRUE(actual);
    EXPECT_EQ(*actual, *expected) << "functions with a profile, ours vs perf2bolt's fdata";
  }

  TempDir tmp_;
};

TEST_F(ConvertBoltAcceptsTest, SeedBinariesProfileEveryFunctionPerfScriptSamples) {
  for (const std::string name : {"hot_clang", "hot_clang64k"}) {
    SCOPED_TRACE(name);
    std::string error;
    const auto symbols = BinarySymbols::load(fixture(name), error);
    ASSERT_TRUE(symbols) << error;
    const auto samples = perf_script_samples(fixture(name + ".data"), error);
    ASSERT_TRUE(samples) << error;
    uint64_t unknown = 0;
    const SiteCounts sites = perf_sites(*samples, fixture(name), *symbols, 0, unknown, error);
    ASSERT_TRUE(error.empty()) << error;
    std::set<uint64_t> functions;
    for (const auto& [site, count] : sites) functions.insert(site.first);
    ASSERT_FALSE(functions.empty());

    const auto actual = profiled_with_our_fdata(name + ".data", name);
    ASSERT_TRUE(actual);
    EXPECT_EQ(*actual, functions.size())
        << "llvm-bolt's profiled functions vs distinct functions perf script samples";
  }
}

TEST_F(ConvertBoltAcceptsTest, GccProgram) {
  expect_same_as_with_perf2bolt("hot_gcc.data", "hot_gcc");
}

TEST_F(ConvertBoltAcceptsTest, SameNamedStaticFunctions) {
  expect_same_as_with_perf2bolt("dup.data", "dup");
}

TEST_F(ConvertBoltAcceptsTest, ProgramWithSharedLibrary) {
  expect_same_as_with_perf2bolt("lib.data", "libmain");
}

TEST_F(ConvertBoltAcceptsTest, SharedLibrary) {
  expect_same_as_with_perf2bolt("lib.data", "libwork.so");
}

}  // namespace
}  // namespace profcollect::test
