// Arm SPE data read from a perf.data (collector/aux/spe_sample_synthesizer.h) when the AUX bytes are
// corrupt or cut short: the reader resynchronises, counts what it skipped or dropped, and turns
// the records it could read into samples, never failing the recording for it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <random>
#include <vector>

#include "collector/input/perf_data_reader.h"
#include "tests/fixtures/spe_writer/spe_packet_encoder.h"
#include "tests/unit/perf_record_builder.h"

// Records are spelled with designated initializers naming only the fields that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace profcollect {
namespace {

namespace fs = std::filesystem;
using namespace perfbuild;
using spe_fixture::SpePacketEncoder;

constexpr uint32_t kSpeType = 8;

// A pipe-mode recording: the SPE attr, TIME_CONV, an Arm SPE AUXTRACE_INFO, the thread 101 of
// process 100, then one AUXTRACE record holding `aux`.
std::vector<uint8_t> spe_recording(const std::vector<uint8_t>& aux) {
  Attr a;
  a.type = kSpeType;
  a.sample_type = IP | TID | TIME | CPU | IDENTIFIER;
  Bytes time_conv;
  time_conv.u64(0).u64(1).u64(0);  // shift, mult, zero
  Bytes info;
  info.u32(4).u32(0).u64(kSpeType).u64(1);
  return pipe_file(
      concat({header_attr(a, {1}), record(79, 0, time_conv), record(70, 0, info),
              comm(100, 101, "prog", true, SampleId{.pid = 100, .tid = 101, .time = 5, .id = 1}, a),
              auxtrace(aux)}));
}

std::vector<uint8_t> good_records(int n) {
  SpePacketEncoder e;
  for (int i = 0; i < n; ++i) {
    spe_fixture::encode_record(e, {.pc = 0x400000 + 4 * static_cast<uint64_t>(i),
                                   .op_class = 2,
                                   .target = 0x400800,
                                   .context = 101,
                                   .timestamp = 100 + static_cast<uint64_t>(i)});
  }
  return e.bytes;
}

class SpeAuxReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "spe_aux_reader_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The samples of the recording; the source's SPE tally in `tally`.
  std::vector<SampleRecord> read(const std::vector<uint8_t>& aux, SpeDecodeTally& tally) {
    const fs::path path = dir_ / "spe.data";
    write_file(path, spe_recording(aux));
    auto source = open_perf_data(path.string());
    std::vector<SampleRecord> out;
    Record r;
    while (source->next(r)) {
      if (const auto* s = std::get_if<SampleRecord>(&r)) out.push_back(*s);
    }
    tally = source->session().spe;
    return out;
  }

  fs::path dir_;
};

TEST_F(SpeAuxReaderTest, WholeRecordsBecomeSamplesOfTheirThread) {
  SpeDecodeTally tally;
  const auto samples = read(good_records(3), tally);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].pid, 100u);  // the CONTEXT packet's tid 101, of process 100 (its COMM)
  EXPECT_EQ(samples[0].tid, 101u);
  EXPECT_EQ(samples[0].time, 100u);  // time_mult 1, shift 0, zero 0
  EXPECT_EQ(samples[1].ip, 0x400004u);
  EXPECT_TRUE(samples[1].has_branch_stack);  // its one entry is a view, gone with the next record
  EXPECT_EQ(tally.records, 3u);
  EXPECT_EQ(tally.taken_branches, 3u);
  EXPECT_EQ(tally.bytes_skipped, 0u);
}

TEST_F(SpeAuxReaderTest, CorruptBytesAreSkippedAndCounted) {
  std::vector<uint8_t> aux = good_records(2);
  const size_t second = aux.size() / 2;
  // Garbage in the middle of the second record: it is dropped, the third is read.
  aux.insert(aux.begin() + static_cast<std::ptrdiff_t>(second + 12), {0xff, 0xfe, 0x10});
  const std::vector<uint8_t> third = good_records(3);
  aux.insert(aux.end(), third.begin() + static_cast<std::ptrdiff_t>(2 * third.size() / 3),
             third.end());
  SpeDecodeTally tally;
  const auto samples = read(aux, tally);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].ip, 0x400000u);
  EXPECT_EQ(samples[1].ip, 0x400008u);
  EXPECT_EQ(tally.bytes_skipped, 3u);
  EXPECT_GE(tally.records_dropped, 1u);
}

TEST_F(SpeAuxReaderTest, TruncatedChunkKeepsItsWholeRecords) {
  std::vector<uint8_t> aux = good_records(4);
  aux.resize(aux.size() - 5);
  SpeDecodeTally tally;
  const auto samples = read(aux, tally);
  EXPECT_EQ(samples.size(), 3u);
  EXPECT_EQ(tally.records_dropped, 1u);
  EXPECT_GT(tally.bytes_truncated, 0u);
}

// Random damage never fails the recording or yields a sample without a thread and an IP.
TEST_F(SpeAuxReaderTest, RandomDamageNeverFailsTheRecording) {
  const std::vector<uint8_t> clean = good_records(50);
  std::mt19937 rng(12345);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint8_t> aux = clean;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < flips; ++i) aux[rng() % aux.size()] = static_cast<uint8_t>(rng());
    aux.resize(aux.size() - rng() % 40);
    SpeDecodeTally tally;
    std::vector<SampleRecord> samples;
    ASSERT_NO_THROW(samples = read(aux, tally)) << "round " << round;
    EXPECT_EQ(samples.size(), tally.records);
    EXPECT_LE(tally.bytes_skipped + tally.bytes_truncated, aux.size());
  }
}

}  // namespace
}  // namespace profcollect
