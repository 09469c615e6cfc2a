// A perf record made while another profiler asks for build-ids in MMAP2 records (profcollect
// does): the kernel shares one MMAP2 record among every event watching a mapping and leaves
// PERF_RECORD_MISC_MMAP_BUILD_ID set once a build-id-taking event has been written, so perf's
// events get the flag over a device/inode body. perf 6.1 then reads the major number as a
// build-id size and aborts (util/build-id.c, a stack overrun). convert must read such a file:
// the flagged records as the device/inode they hold, the library matched by name, and say so.
//
// The recording is made here for real: a program that dlopens a library only after both
// profilers are attached (live_spawner), perf record attached first, profcollect second (the
// kernel writes the newest side-band event first, so perf's come after). Whether this kernel
// does it is read from the file by a parser of its own (flagged_mmap2_records), not by
// profcollect: where it does not, there is nothing to test.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "tests/integration/cpu_time.h"
#include "tests/integration/live_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

// MMAP2 records of `data` (a perf.data file) flagged PERF_RECORD_MISC_MMAP_BUILD_ID whose
// would-be build_id_size is above 20, the largest build-id: a device/inode body under the flag.
// The header's data section is at offset 40 (offset, size); MMAP2 is type 10, its body after
// the 8-byte header is pid, tid, start, len, pgoff, then the 24-byte maj/min/ino or build-id.
std::vector<std::string> flagged_mmap2_records(const fs::path& data) {
  std::ifstream in(data, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto load = [&](size_t at, auto value) {
    std::memcpy(&value, file.data() + at, sizeof value);
    return value;
  };
  std::vector<std::string> flagged;
  if (file.size() < 56 || file.compare(0, 8, "PERFILE2") != 0) return flagged;
  const uint64_t begin = load(40, uint64_t{}), size = load(48, uint64_t{});
  if (begin > file.size() || size > file.size() - begin) return flagged;
  for (uint64_t at = begin; at + 8 <= begin + size;) {
    const uint32_t type = load(at, uint32_t{});
    const uint16_t misc = load(at + 4, uint16_t{}), record_size = load(at + 6, uint16_t{});
    if (record_size < 8 || at + record_size > begin + size) break;
    if (type == 10 && (misc & (1u << 14)) && record_size > 72 &&
        static_cast<uint8_t>(file[at + 40]) > 20) {
      flagged.push_back(file.substr(at + 72, file.find('\0', at + 72) - (at + 72)));
    }
    at += record_size;
  }
  return flagged;
}

class ConvertStaleBuildIdFlag : public LiveFixtureTest {};

TEST_F(ConvertStaleBuildIdFlag, FlaggedDeviceInodeRecordsAreReadAsSuchAndTheLibraryMatchedByName) {
  if (!have_executable("perf")) GTEST_SKIP() << "perf is not installed";
  const fs::path spawner = fixture("live_spawner");
  const fs::path library = fixture("liblive_plug.so");
  TempDir tmp;
  const fs::path go = tmp / "go", out = tmp / "out", data = tmp / "perf.data",
                 fdata = tmp / "plug.fdata";

  // Each worker of the program runs 1 s of its own CPU time once `go` exists; the library is
  // dlopened then.
  BackgroundProcess target = start_target(spawner, {go.string(), library.string(), "1"});
  const std::string pid = std::to_string(target.pid());
  // -B: perf's own build-id pass reads these records too, and aborts on them. perf starts
  // with its events disabled (-D -1) and acknowledges "enable" once every one of them is open:
  // only then does profcollect attach, so that its events are the newer ones.
  const fs::path ctl = tmp / "perf.ctl", ack = tmp / "perf.ack";
  ASSERT_EQ(::mkfifo(ctl.c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(ack.c_str(), 0600), 0);
  BackgroundProcess perf = BackgroundProcess::start(
      {"perf", "record", "-q", "-N", "-B", "-e", "cpu-clock", "-F", "1000", "-D", "-1", "--control",
       "fifo:" + ctl.string() + "," + ack.string(), "-o", data.string(), "-p", pid});
  ASSERT_TRUE(perf_control(ctl, ack, "enable")) << "perf record did not enable\n"
                                                << perf.describe();
  BackgroundProcess collector = start_profcollect({"-o", out.string(), "--pid", pid});
  ASSERT_TRUE(wait_until(
      [&] {
        return collector.err().find("collecting") != std::string::npos || !collector.running();
      },
      kPatience));
  ASSERT_TRUE(collector.running()) << collector.describe();

  write_file(go, "");
  const auto target_status = target.wait(kPatience);
  ASSERT_TRUE(target_status) << "the program did not finish";
  ASSERT_EQ(*target_status, 0) << target.describe();
  ASSERT_TRUE(collector.wait(kPatience)) << collector.describe();
  if (!perf.wait(kPatience)) perf.signal(SIGINT);
  const std::optional<int> perf_status = perf.wait(kPatience);
  ASSERT_TRUE(perf_status) << perf.describe();
  ASSERT_EQ(*perf_status, 0) << perf.describe();

  const std::vector<std::string> flagged = flagged_mmap2_records(data);
  bool library_flagged = false;
  for (const auto& name : flagged) library_flagged |= name == library.string();
  if (!library_flagged) {
    GTEST_SKIP() << "this kernel wrote no flagged device/inode MMAP2 record for the library ("
                 << flagged.size() << " others): nothing to read around";
  }

  const ProfcollectRun run =
      run_profcollect({"convert", "-p", data.string(), "-o", fdata.string(), library.string()});
  ASSERT_EQ(run.run.exit_code, 0) << run.describe();
  EXPECT_NE(run.run.err.find("MMAP2 records are flagged as carrying a build-id"), std::string::npos)
      << run.describe();
  EXPECT_NE(run.run.err.find("matched by file name only"), std::string::npos) << run.describe();

  // plug_work ran 1 s of CPU time sampled at 1000 Hz of that time: about 1000 samples, all in
  // plug_work; a third either way leaves room for a loaded machine's timer slack.
  const StrictFdata profile = read_fdata_strictly(fdata);
  ASSERT_TRUE(profile.valid()) << profile.error;
  const auto per_function = profile.per_function();
  EXPECT_GE(per_function.count("plug_work") ? per_function.at("plug_work") : 0, 667u)
      << run.describe();
  EXPECT_LE(profile.total(), 1333u);
  EXPECT_GE(
      points(per_function.count("plug_work") ? per_function.at("plug_work") : 0, profile.total()),
      95.0);
}

}  // namespace
}  // namespace profcollect::test
