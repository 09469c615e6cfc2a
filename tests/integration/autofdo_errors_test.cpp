// Binaries AutoFDO cannot use, each refused with a DebugInfoError that says what is missing and
// how to get it (the fixtures come from make_autofdo_fixtures.sh).
#include <gtest/gtest.h>

#include "mapper/autofdo_binary.h"
#include "mapper/debug_info_error.h"
#include "tests/integration/autofdo_fixtures.h"

namespace profcollect::test {
namespace {

class AutofdoErrorsTest : public AutofdoFixtureTest {
 protected:
  // The error AutofdoBinary::open gives for the fixture, with `debug_dir` (a fixture directory,
  // or "") as the only debug directory.
  static DebugInfoError open_error(const std::string& name, const std::string& debug_dir) {
    AutofdoBinaryOptions options;
    options.debug_dirs.clear();
    if (!debug_dir.empty()) options.debug_dirs.push_back(fixture(debug_dir).string());
    try {
      AutofdoBinary::open(ElfBinary::open(fixture(name).string()), options);
    } catch (const DebugInfoError& e) {
      return e;
    }
    ADD_FAILURE() << name << " was accepted";
    return DebugInfoError(DebugInfoError::Kind::Unreadable, "");
  }
};

TEST_F(AutofdoErrorsTest, NoDebugInfoNamesTheBuildIdAndThePlacesSearched) {
  const std::string build_id = ElfBinary::open(fixture("nodebug").string())->build_id().to_hex();
  ASSERT_EQ(build_id.size(), 40u);
  const DebugInfoError e = open_error("nodebug", "debug");
  EXPECT_EQ(e.kind(), DebugInfoError::Kind::NoDebugInfo);
  const std::string message = e.what();
  EXPECT_NE(message.find(build_id), std::string::npos) << message;
  const std::string searched = fixture("debug").string() + "/.build-id/" + build_id.substr(0, 2) +
                               "/" + build_id.substr(2) + ".debug";
  EXPECT_NE(message.find(searched), std::string::npos) << message;
  EXPECT_NE(message.find("-g"), std::string::npos) << message;
  EXPECT_NE(message.find("--debug-dir"), std::string::npos) << message;
}

TEST_F(AutofdoErrorsTest, StrippedBinaryWithoutDebugFileSaysItIsStripped) {
  const DebugInfoError e = open_error("stripped", "");
  EXPECT_EQ(e.kind(), DebugInfoError::Kind::NoDebugInfo);
  EXPECT_NE(std::string(e.what()).find("stripped"), std::string::npos) << e.what();
}

TEST_F(AutofdoErrorsTest, SplitDwarfWithoutDwoFilesNamesThem) {
  const DebugInfoError e = open_error("nodwo/hot_nodwo", "");
  EXPECT_EQ(e.kind(), DebugInfoError::Kind::MissingSplitDwarf);
  const std::string message = e.what();
  EXPECT_NE(message.find(fixture("nodwo").string() + "/hot_main.dwo"), std::string::npos)
      << message;
  EXPECT_NE(message.find("-gsplit-dwarf"), std::string::npos) << message;
}

TEST_F(AutofdoErrorsTest, StrippedBinaryWhoseDebugFileHasNoSymbolTable) {
  const DebugInfoError e = open_error("nosymtab/hot_nosymtab", "nosymtab_debug");
  EXPECT_EQ(e.kind(), DebugInfoError::Kind::NoSymbolTable);
  const std::string message = e.what();
  EXPECT_NE(message.find(".symtab"), std::string::npos) << message;
  EXPECT_NE(message.find(fixture("nosymtab_debug").string()), std::string::npos) << message;
}

}  // namespace
}  // namespace profcollect::test
