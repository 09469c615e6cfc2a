// open_perf_data on synthetic files: file mode with feature sections, pipe mode with perf's
// metadata records, payloads outside record sizes, zstd-compressed records, directories, a
// killed perf's zero data size, and damaged input (reported after everything before it).
#include "collector/input/perf_data_reader.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdlib>
#include <filesystem>

#include "tests/unit/perf_record_builder.h"

namespace profcollect {
namespace {

namespace fs = std::filesystem;
using namespace perfbuild;

class PerfDataReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "perf_data_reader_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) {
    write_file(dir_ / name, bytes);
    return (dir_ / name).string();
  }

  fs::path dir_;
};

// "S<time>" for samples, the type otherwise: enough to check content and order.
std::string describe(const Record& r) {
  return std::visit(
      [](const auto& rec) -> std::string {
        using T = std::decay_t<decltype(rec)>;
        if constexpr (std::is_same_v<T, SampleRecord>)
          return "S" + std::to_string(rec.time) + "@" + std::to_string(rec.attr_index);
        else if constexpr (std::is_same_v<T, MmapRecord>)
          return std::string(rec.is_mmap2 ? "MMAP2:" : "MMAP:") + std::string(rec.filename);
        else if constexpr (std::is_same_v<T, CommRecord>)
          return "COMM:" + std::string(rec.comm);
        else if constexpr (std::is_same_v<T, TaskRecord>)
          return rec.is_exit ? "EXIT" : "FORK";
        else if constexpr (std::is_same_v<T, LostRecord>)
          return "LOST" + std::to_string(rec.lost);
        else if constexpr (std::is_same_v<T, ThrottleRecord>)
          return "THROTTLE";
        else if constexpr (std::is_same_v<T, AuxRecord>)
          return "AUX" + std::to_string(rec.aux_size);
        else
          return "OTHER" + std::to_string(rec.type);
      },
      r);
}

std::vector<std::string> read_all(RecordSource& source) {
  std::vector<std::string> out;
  Record r;
  while (source.next(r)) out.push_back(describe(r));
  return out;
}

// Reads until the source throws; returns what came before, and the error.
std::vector<std::string> read_until_error(RecordSource& source, std::optional<SourceError>& error) {
  std::vector<std::string> out;
  Record r;
  try {
    while (source.next(r)) out.push_back(describe(r));
  } catch (const SourceError& e) {
    error = e;
  }
  return out;
}

Attr cycles_attr() {
  Attr a;
  a.type = 0;  // hardware
  a.config = 0;
  a.sample_type = IDENTIFIER | IP | TID | TIME | PERIOD;
  a.flags = kFlagSampleIdAll | kFlagExcludeGuest | precise_ip(2);
  return a;
}
Attr cpu_clock_attr() {
  Attr a = cycles_attr();
  a.type = 1;
  a.flags = kFlagSampleIdAll | kFlagExcludeGuest;
  return a;
}

std::vector<uint8_t> sample_at(uint64_t time, uint64_t id, const Attr& a) {
  Sample s;
  s.identifier = id;
  s.ip = 0x400000 + time;
  s.pid = s.tid = 42;
  s.time = time;
  s.period = 1000;
  return sample(s, a);
}

SampleId at(uint64_t time, uint64_t id = 1) {
  return SampleId{.pid = 42, .tid = 42, .time = time, .id = id};
}

TEST_F(PerfDataReaderTest, FileModeReadsHeaderFeaturesAndRecordsInTimeOrder) {
  const Attr a = cycles_attr(), b = cpu_clock_attr();
  const std::vector<uint8_t> data = concat({
      comm(42, 42, "prog", false, at(0), a),
      mmap2(Mmap2{.pid = 42, .tid = 42, .start = 0x400000, .len = 0x1000, .file = "/bin/prog"},
            at(0), a),
      sample_at(30, 1, a),
      sample_at(10, 3, b),
      finished_round(),
      sample_at(20, 2, a),
      sample_at(40, 1, a),
      finished_round(),
      sample_at(35, 3, b),
  });
  Bytes cmdline;
  cmdline.u32(2).perf_string("perf").perf_string("record");
  Bytes hostname, osrelease, version, arch;
  hostname.perf_string("host1");
  osrelease.perf_string("6.1.0-test");
  version.perf_string("6.1.42");
  arch.perf_string("x86_64");
  Bytes build_ids;
  build_ids.append(build_id_record(42, {0xaa, 0xbb, 0xcc, 0xdd}, "/bin/prog"));
  build_ids.append(
      build_id_record(UINT32_MAX, std::vector<uint8_t>(20, 0x11), "[kernel.kallsyms]", 1));
  const std::string path =
      write("file.data", perf_file({{a, {1, 2}}, {b, {3}}}, data,
                                   {{2, build_ids},
                                    {3, hostname},
                                    {4, osrelease},
                                    {5, version},
                                    {6, arch},
                                    {11, cmdline},
                                    {12, event_desc({{a, {"my-cycles", {1, 2}}}})}}));

  auto source = open_perf_data(path);
  const SessionInfo& info = source->session();
  ASSERT_EQ(info.attrs.size(), 2u);
  EXPECT_EQ(info.attrs[0].name, "my-cycles");  // from the event desc
  EXPECT_EQ(info.attrs[1].name, "cpu-clock");  // derived, as perf does
  EXPECT_EQ(info.attrs[0].ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(info.attrs[1].ids, (std::vector<uint64_t>{3}));
  EXPECT_EQ(info.attrs[0].sample_type, a.sample_type);
  EXPECT_TRUE(info.attrs[0].sample_id_all);
  EXPECT_EQ(info.hostname, "host1");
  EXPECT_EQ(info.os_release, "6.1.0-test");
  EXPECT_EQ(info.perf_version, "6.1.42");
  EXPECT_EQ(info.arch, "x86_64");
  EXPECT_EQ(info.cmdline, (std::vector<std::string>{"perf", "record"}));
  ASSERT_EQ(info.build_ids.size(), 2u);
  EXPECT_EQ(info.build_ids[0].build_id.to_hex(), "aabbccdd");
  EXPECT_EQ(info.build_ids[0].filename, "/bin/prog");
  EXPECT_EQ(info.build_ids[0].pid, 42u);
  EXPECT_EQ(info.build_ids[1].build_id.size(), 20u);
  EXPECT_EQ(info.build_ids[1].cpumode_misc & 7, 1);

  EXPECT_EQ(read_all(*source), (std::vector<std::string>{"COMM:prog", "MMAP2:/bin/prog", "S10@1",
                                                         "S20@0", "S30@0", "S35@1", "S40@0"}));
  EXPECT_EQ(source->bytes_total(), fs::file_size(path));
  EXPECT_EQ(source->bytes_read(), source->bytes_total());
}

TEST_F(PerfDataReaderTest, PipeModeMetadataRecords) {
  const Attr a = cycles_attr(), b = cpu_clock_attr();
  Bytes hostname;
  hostname.perf_string("pipehost");
  const std::vector<uint8_t> records = concat({
      header_attr(a, {1}), header_attr(b, {}), id_index({{5, 1}}),  // id 5 belongs to attr 1
      event_update_name(5, "renamed"), header_feature(3, hostname),
      header_feature(12, event_desc({{a, {"desc-name", {1}}}, {b, {"ignored", {5}}}})),
      tracing_data(std::vector<uint8_t>(24, 0xee)),                  // payload outside the record
      sample_at(2, 1, a), auxtrace(std::vector<uint8_t>(40, 0x77)),  // payload outside the record
      sample_at(1, 5, b), record(82, 0, {}),                         // FINISHED_INIT
      sample_at(3, 1, a),
      build_id_record(42, {1, 2, 3}, "/bin/late"),  // pipe mode sends build-ids last
  });
  const std::string path = write("pipe.data", pipe_file(records));
  auto source = open_perf_data(path);
  const SessionInfo& info = source->session();
  ASSERT_EQ(info.attrs.size(), 2u);
  EXPECT_EQ(info.attrs[0].name, "desc-name");
  EXPECT_EQ(info.attrs[1].name, "renamed");  // EVENT_UPDATE first; the desc does not override
  EXPECT_EQ(info.attrs[1].ids, (std::vector<uint64_t>{5}));
  EXPECT_EQ(info.hostname, "pipehost");
  EXPECT_EQ(read_all(*source), (std::vector<std::string>{"S1@1", "S2@0", "S3@0"}));
  ASSERT_EQ(info.build_ids.size(), 1u);
  EXPECT_EQ(info.build_ids[0].filename, "/bin/late");
  EXPECT_EQ(info.build_ids[0].build_id.to_hex(), "010203");
  EXPECT_EQ(source->bytes_read(), fs::file_size(path));
}

TEST_F(PerfDataReaderTest, PipeModeWithoutAttrIdsAndWithDerivedNames) {
  Attr a = cycles_attr();
  a.sample_type = IP | TID | TIME | PERIOD;  // no id at all
  const std::string path =
      write("noids.data",
            pipe_file(concat({header_attr(a, {}), sample_at(5, 0, a), sample_at(4, 0, a)})));
  auto source = open_perf_data(path);
  EXPECT_EQ(read_all(*source), (std::vector<std::string>{"S4@0", "S5@0"}));
  EXPECT_EQ(source->session().attrs[0].name, "cycles:ppH");
}

// zstd-compresses `data` as perf record -z does: one stream, flushed (not ended) per chunk.
std::vector<std::vector<uint8_t>> zstd_chunks(const std::vector<uint8_t>& data,
                                              const std::vector<size_t>& cuts) {
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  std::vector<std::vector<uint8_t>> out;
  size_t begin = 0;
  for (size_t end : cuts) {
    std::vector<uint8_t> buf(ZSTD_compressBound(end - begin) + 64);
    ZSTD_inBuffer in{data.data() + begin, end - begin, 0};
    ZSTD_outBuffer o{buf.data(), buf.size(), 0};
    size_t left;
    do {
      left = ZSTD_compressStream2(ctx, &o, &in, ZSTD_e_flush);
    } while (left != 0 && !ZSTD_isError(left));
    buf.resize(o.pos);
    out.push_back(buf);
    begin = end;
  }
  ZSTD_freeCCtx(ctx);
  return out;
}

TEST_F(PerfDataReaderTest, CompressedRecordsIncludingOneSplitAcrossTwo) {
  const Attr a = cycles_attr();
  std::vector<uint8_t> plain;
  for (uint64_t t = 1; t <= 40; ++t) {
    auto s = sample_at(41 - t, 1, a);  // reversed times: ordering happens after decompression
    plain.insert(plain.end(), s.begin(), s.end());
  }
  const size_t record = sample_at(1, 1, a).size();
  // The first chunk ends in the middle of the 13th record.
  auto chunks = zstd_chunks(plain, {12 * record + 5, plain.size()});
  const std::string path =
      write("z.data", perf_file({{a, {1}}}, concat({compressed(chunks[0]), compressed(chunks[1]),
                                                    finished_round()})));
  auto source = open_perf_data(path);
  std::vector<std::string> expected;
  for (uint64_t t = 1; t <= 40; ++t) expected.push_back("S" + std::to_string(t) + "@0");
  EXPECT_EQ(read_all(*source), expected);
}

TEST_F(PerfDataReaderTest, Compressed2RecordsWithPadding) {
  const Attr a = cycles_attr();
  const std::vector<uint8_t> plain =
      concat({sample_at(3, 1, a), sample_at(1, 1, a), sample_at(2, 1, a)});
  auto chunks = zstd_chunks(plain, {50, plain.size()});
  const std::string path = write(
      "z2.data",
      pipe_file(concat({header_attr(a, {1}), compressed2(chunks[0]), compressed2(chunks[1])})));
  auto source = open_perf_data(path);
  EXPECT_EQ(read_all(*source), (std::vector<std::string>{"S1@0", "S2@0", "S3@0"}));
}

TEST_F(PerfDataReaderTest, BadCompressedFrameIsReportedAtItsRecord) {
  const Attr a = cycles_attr();
  const auto good = zstd_chunks(sample_at(1, 1, a), {sample_at(1, 1, a).size()})[0];
  const std::vector<uint8_t> before = concat({sample_at(2, 1, a), compressed(good)});
  const std::string path =
      write("badz.data",
            perf_file({{a, {1}}}, concat({before, compressed(std::vector<uint8_t>(24, 0xff))})));
  auto source = open_perf_data(path);
  std::optional<SourceError> error;
  EXPECT_EQ(read_until_error(*source, error), (std::vector<std::string>{"S1@0", "S2@0"}));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->file(), path);
  const uint64_t data_offset = fs::file_size(path) - before.size() - 32;
  EXPECT_EQ(error->offset(), data_offset + before.size());
  EXPECT_NE(error->reason().find("compressed"), std::string::npos) << error->reason();
}

TEST_F(PerfDataReaderTest, ZeroSizeRecordIsReportedAfterEverythingBeforeIt) {
  const Attr a = cycles_attr();
  const std::vector<uint8_t> good =
      concat({header_attr(a, {1}), sample_at(3, 1, a), sample_at(1, 1, a), sample_at(2, 1, a)});
  std::vector<uint8_t> bad = sample_at(4, 1, a);
  bad[6] = bad[7] = 0;  // size 0
  const std::string path = write("zero.data", pipe_file(concat({good, bad})));
  auto source = open_perf_data(path);
  std::optional<SourceError> error;
  EXPECT_EQ(read_until_error(*source, error), (std::vector<std::string>{"S1@0", "S2@0", "S3@0"}));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->file(), path);
  EXPECT_EQ(error->offset(), 16 + good.size());
  EXPECT_NE(error->reason().find("size 0"), std::string::npos) << error->reason();
  Record r;
  EXPECT_FALSE(source->next(r));  // and then it is over
}

TEST_F(PerfDataReaderTest, RecordShorterThanItsAttrSays) {
  const Attr a = cycles_attr();
  std::vector<uint8_t> short_sample = record(9, 2, Bytes().u64(1).u64(0x400000));  // no TID...
  const std::string path = write(
      "short.data", pipe_file(concat({header_attr(a, {1}), sample_at(1, 1, a), short_sample})));
  auto source = open_perf_data(path);
  std::optional<SourceError> error;
  EXPECT_EQ(read_until_error(*source, error), (std::vector<std::string>{"S1@0"}));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->offset(), fs::file_size(path) - short_sample.size());
}

TEST_F(PerfDataReaderTest, TruncatedLastRecord) {
  const Attr a = cycles_attr();
  std::vector<uint8_t> file =
      pipe_file(concat({header_attr(a, {1}), sample_at(1, 1, a), sample_at(2, 1, a)}));
  file.resize(file.size() - 5);
  const std::string path = write("cut.data", file);
  auto source = open_perf_data(path);
  std::optional<SourceError> error;
  EXPECT_EQ(read_until_error(*source, error), (std::vector<std::string>{"S1@0"}));
  ASSERT_TRUE(error);
  EXPECT_NE(error->reason().find("truncated"), std::string::npos) << error->reason();
}

TEST_F(PerfDataReaderTest, TruncatedAuxtracePayload) {
  const Attr a = cycles_attr();
  std::vector<uint8_t> file = pipe_file(
      concat({header_attr(a, {1}), sample_at(1, 1, a), auxtrace(std::vector<uint8_t>(64, 1))}));
  file.resize(file.size() - 10);
  auto source = open_perf_data(write("aux.data", file));
  std::optional<SourceError> error;
  EXPECT_EQ(read_until_error(*source, error), (std::vector<std::string>{"S1@0"}));
  ASSERT_TRUE(error);
  EXPECT_NE(error->reason().find("payload"), std::string::npos) << error->reason();
}

TEST_F(PerfDataReaderTest, FileEndingBeforeItsDataSection) {
  const Attr a = cycles_attr();
  std::vector<uint8_t> file =
      perf_file({{a, {1}}}, concat({sample_at(1, 1, a), sample_at(2, 1, a)}));
  file.resize(file.size() - sample_at(2, 1, a).size());  // a copy cut at a record boundary
  auto source = open_perf_data(write("short_copy.data", file));
  std::optional<SourceError> error;
  EXPECT_EQ(read_until_error(*source, error), (std::vector<std::string>{"S1@0"}));
  ASSERT_TRUE(error);
  EXPECT_NE(error->reason().find("before the end of its data section"), std::string::npos);
}

TEST_F(PerfDataReaderTest, KilledPerfDataSizeZeroReadsToTheEnd) {
  const Attr a = cycles_attr();
  const std::string path =
      write("killed.data", perf_file({{a, {1}}},
                                     concat({sample_at(2, 1, a), finished_round(),
                                             sample_at(1, 1, a), sample_at(3, 1, a)}),
                                     {}, /*zero_data_size=*/true));
  auto source = open_perf_data(path);
  EXPECT_EQ(read_all(*source), (std::vector<std::string>{"S1@0", "S2@0", "S3@0"}));
  EXPECT_EQ(source->session().attrs[0].name, "cycles:ppH");
}

TEST_F(PerfDataReaderTest, DirectoryOfThreadFilesIsMergedByTime) {
  const Attr a = cycles_attr();
  fs::create_directory(dir_ / "threads.data");
  write("threads.data/data",
        perf_file({{a, {1}}}, concat({comm(42, 42, "prog", false, at(0), a), record(82, 0, {})})));
  write("threads.data/data.0",
        concat({sample_at(1, 1, a), sample_at(4, 1, a), sample_at(5, 1, a)}));
  write("threads.data/data.1",
        concat({sample_at(2, 1, a), comm(42, 42, "later", true, at(3), a), sample_at(6, 1, a)}));
  write("threads.data/data.10", sample_at(7, 1, a));
  auto source = open_perf_data((dir_ / "threads.data").string());
  EXPECT_EQ(read_all(*source), (std::vector<std::string>{"COMM:prog", "S1@0", "S2@0", "COMM:later",
                                                         "S4@0", "S5@0", "S6@0", "S7@0"}));
  EXPECT_EQ(source->bytes_read(), source->bytes_total());
}

// A thread file is not in time order: the kernel stamps a record before it takes its place in
// the ring buffer, so a sample taken in between comes first with a later time (seen in a real
// `perf record --threads` recording: a FORK 12 us earlier than the sample before it). perf sorts
// every record of the directory; so do we.
TEST_F(PerfDataReaderTest, ThreadFileRecordsOutOfTimeOrderAreSorted) {
  const Attr a = cycles_attr();
  fs::create_directory(dir_ / "late.data");
  write("late.data/data", perf_file({{a, {1}}}, {}));
  write("late.data/data.0",
        concat({sample_at(1, 1, a), sample_at(5, 1, a),
                comm(42, 42, "stamped-earlier", true, at(3), a), sample_at(6, 1, a)}));
  write("late.data/data.1", concat({sample_at(2, 1, a), sample_at(4, 1, a), sample_at(7, 1, a)}));
  auto source = open_perf_data((dir_ / "late.data").string());
  EXPECT_EQ(read_all(*source), (std::vector<std::string>{"S1@0", "S2@0", "COMM:stamped-earlier",
                                                         "S4@0", "S5@0", "S6@0", "S7@0"}));
  EXPECT_EQ(source->bytes_read(), source->bytes_total());
}

TEST_F(PerfDataReaderTest, DamageInAThreadFileIsReported) {
  const Attr a = cycles_attr();
  fs::create_directory(dir_ / "t.data");
  write("t.data/data", perf_file({{a, {1}}}, {}));
  std::vector<uint8_t> bad = sample_at(9, 1, a);
  bad.resize(bad.size() - 3);
  write("t.data/data.0", concat({sample_at(1, 1, a), bad}));
  auto source = open_perf_data((dir_ / "t.data").string());
  std::optional<SourceError> error;
  EXPECT_EQ(read_until_error(*source, error), (std::vector<std::string>{"S1@0"}));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->file(), (dir_ / "t.data" / "data.0").string());
  EXPECT_EQ(error->offset(), sample_at(1, 1, a).size());
}

TEST_F(PerfDataReaderTest, FilesThatAreNotReadablePerfDataFail) {
  EXPECT_THROW(open_perf_data((dir_ / "missing.data").string()), OpenError);
  EXPECT_THROW(open_perf_data(write("empty.data", {})), OpenError);
  EXPECT_THROW(open_perf_data(write("text.data", std::vector<uint8_t>(200, 'x'))), OpenError);
  std::vector<uint8_t> v1 = perf_file({{cycles_attr(), {1}}}, {});
  std::memcpy(v1.data(), "PERFFILE", 8);
  EXPECT_THROW(open_perf_data(write("v1.data", v1)), OpenError);
  std::vector<uint8_t> big = perf_file({{cycles_attr(), {1}}}, {});
  std::reverse(big.begin(), big.begin() + 8);  // the magic as a big-endian host writes it
  try {
    open_perf_data(write("be.data", big));
    ADD_FAILURE() << "big-endian file accepted";
  } catch (const OpenError& e) {
    EXPECT_NE(std::string(e.what()).find("big-endian"), std::string::npos) << e.what();
  }
  std::vector<uint8_t> odd_header = perf_file({{cycles_attr(), {1}}}, {});
  odd_header[8] = 50;
  EXPECT_THROW(open_perf_data(write("odd.data", odd_header)), OpenError);
  std::vector<uint8_t> no_attrs = perf_file({}, {});
  EXPECT_THROW(open_perf_data(write("noattrs.data", no_attrs)), OpenError);
}

}  // namespace
}  // namespace profcollect
