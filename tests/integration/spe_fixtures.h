// The Arm SPE fixture set (tests/fixtures/make_spe_fixtures.sh): an arm64 test program and a
// perf.data of SPE records written as perf writes it on arm64, generated once into
// <build>/fixtures/spe/ and reused until the script, spe_loop.c or the writer changes.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace profcollect::test {

class SpeFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // A file of the set: "spe_loop", "spe_loop.data", "spe_loop.aux".
  static std::filesystem::path fixture(const std::string& name);
};

}  // namespace profcollect::test
