// The programs the AutoFDO tests judge (tests/fixtures/make_autofdo_fixtures.sh), generated once
// into <build>/fixtures/autofdo/ and reused until the script or its sources change, plus the
// steps every AutoFDO comparison shares: our profile from a perf.data, and llvm-profgen-19's and
// llvm-profdata-19's views of profiles.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "output/ip_profile.h"

namespace profcollect::test {

class AutofdoFixtureTest : public ::testing::Test {
 protected:
  // Skips when a tool the fixtures or the judges need is missing; fails when the script fails.
  void SetUp() override;

  // A file of the fixture set ("hot_dwarf5", "hot_dwarf5.data", "debug", ...), canonical so that
  // it equals the paths the kernel recorded.
  static std::filesystem::path fixture(const std::string& name);
};

// The samples of `binary` in `perf_data`, per ELF address, read with our perf.data reader,
// process table and resolver (as `profcollect convert` reads them).
IpProfile read_ip_profile(const std::filesystem::path& perf_data,
                          const std::filesystem::path& binary);

// `perf script -F ip,brstack --show-mmap-events` of the recording with a dummy branch entry
// after every bare IP: the input llvm-profgen needs for IP samples (oracles.md).
std::string ip_perf_script(const std::filesystem::path& perf_data);

// Runs llvm-profgen-19 with the arguments (plus --format=text -o OUT) and returns the profile;
// a failed run fails the test (the message holds its stderr) and returns "".
std::string run_llvm_profgen(const std::vector<std::string>& arguments,
                             const std::filesystem::path& dir);

// The profile as `llvm-profdata-19 merge --sample --text` rewrites it (the oracles' "equal").
std::string normalize_profile(const std::string& profile_text, const std::filesystem::path& dir);

// "" when equal, else the first differing lines of both, for assertion messages.
std::string profile_difference(const std::string& ours, const std::string& reference);

}  // namespace profcollect::test
