// The Arm SPE fixture set (tests/fixtures/make_spe_fixtures.sh): an arm64 test program and a
// perf.data of SPE records written as perf writes it on arm64, generated once into
// <build>/fixtures/spe/ and reused until the script, spe_loop.c or the writer changes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace profcollect::test {

class SpeFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // A file of the set: "spe_loop", "spe_loop.data", "spe_loop.aux".
  static std::filesystem::path fixture(const std::string& name);
};

// A user-space (EL0) record of a taken branch with its target, as `perf report -D` dumps an SPE
// perf.data's packets (the judge of the decoder): PC, TGT, the B operation, EV without NOT-TAKEN.
struct PerfDumpTakenBranch {
  uint64_t pc = 0, target = 0;
  bool mispredicted = false;
};
// Every such record of `data`, in file order; fails the test if perf does.
std::vector<PerfDumpTakenBranch> perf_dump_taken_branches(const std::filesystem::path& data);

}  // namespace profcollect::test
