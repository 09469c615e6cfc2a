// Acceptance 6: bad input. Every failure is exactly one stderr line
// `profcollect: error: <file>: <reason>` naming the file at fault, exit status 1, and no output
// file left behind (not even an empty or temporary one). Usage errors exit 2. `report` on a
// damaged perf.data prints what it read before the damage and exits 1.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <sstream>

#include "tests/integration/convert_fixtures.h"
#include "tests/integration/convert_judges.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kPerfRecordSample = 9;

// A perf.data cut short inside one sample record, with the facts a reader should report.
struct CutPerfData {
  uint64_t record_offset = 0;     // where the cut record starts
  uint64_t file_size = 0;         // where the file now ends
  uint64_t complete_samples = 0;  // sample records wholly before the cut
};

// Walks the data section of a perf.data file (header: data.offset at byte 40, data.size at 48;
// records start with u32 type, u16 misc, u16 size), and writes a copy cut `into_record` bytes
// into the middle sample record.
CutPerfData cut_mid_record(const fs::path& from, const fs::path& to, uint64_t into_record) {
  const std::string file = read_file(from);
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, file.data() + at, 8);
    return v;
  };
  if (file.size() < 64 || file.compare(0, 8, "PERFILE2") != 0)
    throw std::runtime_error(from.string() + " is not a perf.data file");
  const uint64_t data_offset = u64(40), data_end = data_offset + u64(48);

  std::vector<std::pair<uint64_t, uint16_t>> samples;  // (offset, size)
  for (uint64_t at = data_offset; at + 8 <= data_end && at + 8 <= file.size();) {
    uint32_t type;
    uint16_t size;
    std::memcpy(&type, file.data() + at, 4);
    std::memcpy(&size, file.data() + at + 6, 2);
    if (size < 8) throw std::runtime_error("bad record size in " + from.string());
    if (type == kPerfRecordSample) samples.emplace_back(at, size);
    at += size;
  }
  if (samples.size() < 100) throw std::runtime_error("too few samples in " + from.string());
  const auto [record_offset, record_size] = samples[samples.size() / 2];
  if (into_record == 0 || into_record >= record_size)
    throw std::runtime_error("cut must fall inside the record");

  CutPerfData cut;
  cut.record_offset = record_offset;
  cut.file_size = record_offset + into_record;
  cut.complete_samples = samples.size() / 2;
  write_file(to, std::string_view(file).substr(0, cut.file_size));
  return cut;
}

std::string hex(uint64_t value) {
  std::ostringstream text;
  text << "0x" << std::hex << value;
  return text.str();
}

bool mentions_offset(const std::string& line, uint64_t offset) {
  return line.find(std::to_string(offset)) != std::string::npos ||
         contains_ignoring_case(line, hex(offset));
}

class ConvertErrorsTest : public ConvertFixtureTest {
 protected:
  // Runs convert into tmp_/out.fdata and checks the error contract; returns the stderr line.
  std::string expect_convert_error(const fs::path& data, const fs::path& binary,
                                   const fs::path& out, const std::vector<std::string>& mentions) {
    const auto before = tmp_.entries();
    const ProfcollectRun run = run_profcollect(
        {"convert", "-p", data.string(), "-o", out.string(), "-nl", binary.string()});
    EXPECT_EQ(run.run.exit_code, 1) << run.describe();
    const auto lines = split_lines(run.run.err);
    EXPECT_EQ(lines.size(), 1u) << "want exactly one stderr line; " << run.describe();
    const std::string line = lines.empty() ? "" : lines.front();
    EXPECT_TRUE(line.starts_with("profcollect: error: "))
        << "want `profcollect: error: <file>: <reason>`, got: " << line;
    for (const auto& mention : mentions)
      EXPECT_NE(line.find(mention), std::string::npos)
          << "error does not name " << mention << ": " << line;
    std::error_code ignored;
    EXPECT_FALSE(fs::exists(out, ignored)) << "output left behind: " << out;
    EXPECT_EQ(tmp_.entries(), before) << "files left behind in the output directory";
    return line;
  }

  fs::path out() const { return tmp_ / "out.fdata"; }

  TempDir tmp_;
};

TEST_F(ConvertErrorsTest, MissingPerfData) {
  const auto missing = tmp_ / "missing.data";
  expect_convert_error(missing, fixture("hot_gcc"), out(), {missing.string()});
}

TEST_F(ConvertErrorsTest, BinaryIsNotElf) {
  const auto not_elf = tmp_ / "not-elf";
  write_file(not_elf, "#!/bin/sh\necho this is a shell script, not an ELF file\n");
  expect_convert_error(fixture("hot_gcc.data"), not_elf, out(), {not_elf.string()});
}

TEST_F(ConvertErrorsTest, EmptyPerfData) {
  const auto empty = tmp_ / "empty.data";
  write_file(empty, "");
  expect_convert_error(empty, fixture("hot_gcc"), out(), {empty.string()});
}

TEST_F(ConvertErrorsTest, PerfDataOfAnotherBinary) {
  const auto line = expect_convert_error(fixture("hot_gcc.data"), fixture("dup"), out(),
                                         {fixture("dup").string()});
  EXPECT_TRUE(contains_ignoring_case(line, "sample")) << "want `no samples of BINARY`: " << line;
}

TEST_F(ConvertErrorsTest, OutputInMissingDirectory) {
  const auto unwritable = tmp_ / "no-such-dir" / "out.fdata";
  expect_convert_error(fixture("hot_gcc.data"), fixture("hot_gcc"), unwritable,
                       {unwritable.string()});
}

TEST_F(ConvertErrorsTest, OutputUnderProc) {
  // Root may write anywhere on a disk; nobody may create files in /proc.
  const fs::path unwritable = "/proc/profcollect-no-such-dir/out.fdata";
  expect_convert_error(fixture("hot_gcc.data"), fixture("hot_gcc"), unwritable,
                       {unwritable.string()});
}

TEST_F(ConvertErrorsTest, PerfDataCutInsideARecordBody) {
  const auto cut_path = tmp_ / "cut.data";
  const CutPerfData cut = cut_mid_record(fixture("hot_gcc.data"), cut_path, 12);
  const auto line = expect_convert_error(cut_path, fixture("hot_gcc"), out(), {cut_path.string()});
  EXPECT_TRUE(mentions_offset(line, cut.record_offset) || mentions_offset(line, cut.file_size))
      << "want the byte offset of the damage (record at " << cut.record_offset << ", file ends at "
      << cut.file_size << "): " << line;
}

TEST_F(ConvertErrorsTest, PerfDataCutInsideARecordHeader) {
  const auto cut_path = tmp_ / "cut.data";
  const CutPerfData cut = cut_mid_record(fixture("hot_gcc.data"), cut_path, 4);
  const auto line = expect_convert_error(cut_path, fixture("hot_gcc"), out(), {cut_path.string()});
  EXPECT_TRUE(mentions_offset(line, cut.record_offset) || mentions_offset(line, cut.file_size))
      << "want the byte offset of the damage (record at " << cut.record_offset << ", file ends at "
      << cut.file_size << "): " << line;
}

TEST_F(ConvertErrorsTest, ReportOnCutPerfDataPrintsWhatItReadAndFails) {
  const auto cut_path = tmp_ / "cut.data";
  const CutPerfData cut = cut_mid_record(fixture("hot_gcc.data"), cut_path, 12);
  const ProfcollectRun run = run_profcollect({"report", cut_path.string(), "--json"});
  EXPECT_EQ(run.run.exit_code, 1) << run.describe();
  const auto lines = split_lines(run.run.err);
  ASSERT_EQ(lines.size(), 1u) << run.describe();
  EXPECT_NE(lines.front().find(cut_path.string()), std::string::npos) << lines.front();
  const auto report = nlohmann::json::parse(run.run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << "stdout is not JSON: " << run.describe();
  ASSERT_TRUE(report.contains("samples")) << run.run.out;
  EXPECT_EQ(report["samples"].get<uint64_t>(), cut.complete_samples)
      << "want the samples wholly before the cut";
}

TEST_F(ConvertErrorsTest, UsageErrorsExit2) {
  const std::string data = fixture("hot_gcc.data").string();
  const std::string binary = fixture("hot_gcc").string();
  const std::string output = out().string();
  const std::vector<std::vector<std::string>> misuses = {
      {},
      {"no-such-command"},
      {"convert"},
      {"convert", "-p", data, "-o", output},   // no BINARY
      {"convert", "-p", data, "-nl", binary},  // no -o
      {"convert", "-p", data, "-o", output, "--no-such-option", binary},
      {"convert", "-p", data, "-o", output, "--pid", "not-a-number", binary},
  };
  for (const auto& args : misuses) {
    const ProfcollectRun run = run_profcollect(args);
    EXPECT_EQ(run.run.exit_code, 2) << run.describe();
  }
  std::error_code ignored;
  EXPECT_FALSE(fs::exists(out(), ignored));
}

// The spec writes `-p PERF.DATA` as required (perf2bolt has no default either); a default of
// ./perf.data would turn a forgotten -p into a confusing "perf.data: No such file" error.
TEST_F(ConvertErrorsTest, MissingPerfDataOptionIsAUsageError) {
  const ProfcollectRun run =
      run_profcollect({"convert", "-o", out().string(), "-nl", fixture("hot_gcc").string()});
  EXPECT_EQ(run.run.exit_code, 2) << run.describe();
}

}  // namespace
}  // namespace profcollect::test
