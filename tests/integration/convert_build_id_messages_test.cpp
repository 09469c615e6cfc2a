// What convert says about build-ids: a file of BINARY's name with another build-id is refused
// with the recorded path and both build-ids; a recording whose build-id table is cut short (or
// that has none) still converts by file name, and says so. The build-ids are readelf's.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"
#include "tests/integration/live_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

class ConvertBuildIdMessages : public ConvertFixtureTest {
 protected:
  // A copy of `binary` under the same file name whose build-id differs in its last byte.
  fs::path copy_with_other_build_id(const fs::path& binary, const std::string& id) {
    fs::create_directories(tmp_ / "other");
    const fs::path copy = tmp_ / "other" / binary.filename();
    std::string bytes = read_file(binary);
    std::string raw;
    for (size_t i = 0; i + 1 < id.size(); i += 2)
      raw.push_back(static_cast<char>(std::stoi(id.substr(i, 2), nullptr, 16)));
    const size_t at = bytes.find(raw);
    EXPECT_NE(at, std::string::npos) << "the build-id bytes are not in " << binary;
    EXPECT_EQ(bytes.find(raw, at + 1), std::string::npos) << "the build-id bytes occur twice";
    bytes[at + raw.size() - 1] ^= 0x5a;
    write_file(copy, bytes);
    return copy;
  }
  TempDir tmp_;
};

TEST_F(ConvertBuildIdMessages, MismatchNamesTheRecordedPathAndBothBuildIds) {
  const fs::path binary = fixture("hot_gcc");
  const std::string recorded = readelf_build_id(binary);
  ASSERT_EQ(recorded.size(), 40u);
  const fs::path copy = copy_with_other_build_id(binary, recorded);
  const std::string other = readelf_build_id(copy);
  ASSERT_EQ(other.size(), 40u);
  ASSERT_NE(other, recorded);
  const ProfcollectRun r = run_profcollect({"convert", "-p", fixture("hot_gcc.data").string(), "-o",
                                            (tmp_ / "o.fdata").string(), copy.string()});
  EXPECT_EQ(r.run.exit_code, 1) << r.describe();
  const auto lines = split_lines(r.run.err);
  ASSERT_EQ(lines.size(), 1u) << r.describe();
  EXPECT_NE(lines[0].find(binary.string() + " (build-id " + recorded + ")"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find(other), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("--ignore-build-id"), std::string::npos) << lines[0];
  EXPECT_FALSE(fs::exists(tmp_ / "o.fdata"));
}

TEST_F(ConvertBuildIdMessages, CutBuildIdTableSaysTheBinaryWasMatchedByName) {
  // perf.data: data.offset at byte 40, data.size at 48; the feature section table follows the
  // data. Cut inside that table: every record is there, the build-id table is not.
  // A recording whose build-ids are in perf's header table only (the other fixtures carry them in
  // their MMAP2 records, which no cut reaches).
  if (!fs::exists(fixture("hot_gcc_table.data"))) {
    GTEST_SKIP() << read_file(fixture("hot_gcc_table.aborted"));
  }
  const std::string file = read_file(fixture("hot_gcc_table.data"));
  uint64_t offset = 0, size = 0;
  std::memcpy(&offset, file.data() + 40, 8);
  std::memcpy(&size, file.data() + 48, 8);
  ASSERT_LT(offset + size + 8, file.size());
  const fs::path cut = tmp_ / "cut.data";
  write_file(cut, std::string_view(file).substr(0, offset + size + 8));
  // perf itself reads the cut file's samples (the judge that the records are intact).
  const CommandResult perf = run_command({"perf", "script", "-i", cut.string(), "-F", "ip"});
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  ASSERT_GT(split_lines(perf.out).size(), 100u);

  const fs::path binary = fixture("hot_gcc");
  const std::string recorded = readelf_build_id(binary);
  const fs::path copy = copy_with_other_build_id(binary, recorded);
  const ProfcollectRun r = run_profcollect(
      {"convert", "-p", cut.string(), "-o", (tmp_ / "o.fdata").string(), copy.string()});
  EXPECT_EQ(r.run.exit_code, 0) << r.describe();
  EXPECT_NE(r.run.err.find("warning: " + cut.string() + ": its build-id table is damaged"),
            std::string::npos)
      << r.describe();
  EXPECT_NE(r.run.err.find(copy.string() + " was matched by file name only"), std::string::npos)
      << r.describe();

  // The whole file matches by build-id, and says nothing of the kind.
  const ProfcollectRun whole =
      run_profcollect({"convert", "-p", fixture("hot_gcc_table.data").string(), "-o",
                       (tmp_ / "w.fdata").string(), binary.string()});
  EXPECT_EQ(whole.run.exit_code, 0) << whole.describe();
  EXPECT_EQ(whole.run.err.find("matched by file name"), std::string::npos) << whole.describe();
}

}  // namespace
}  // namespace profcollect::test
