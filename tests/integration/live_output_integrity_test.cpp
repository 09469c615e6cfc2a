// What a live collection leaves in its output directory stays whole and stays its own:
//  - killed (SIGKILL) at random instants while flushing every 10 ms, every binary directory
//    still counts the same samples in meta.json, bolt.fdata and samples.ip, and the next run
//    leaves no temporary entry behind;
//  - a symlink or another user's directory planted under a binary's directory name in a sticky,
//    world-writable output directory is neither followed nor written into, and both are reported;
//  - on a full file system the previous profiles stay intact byte for byte, the run exits
//    non-zero, and the messages name the file and the reason.
// The readers here share no code with profcollect's (live_support.h).
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "tests/integration/live_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr auto kPatience = std::chrono::milliseconds(120000);

// The sum of the counts in samples.ip ("<hex address> <decimal count>" lines).
std::optional<uint64_t> samples_ip_total(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  uint64_t total = 0;
  std::string address;
  uint64_t count = 0;
  while (in >> address >> count) total += count;
  if (!in.eof()) return std::nullopt;
  return total;
}

// Every file in `dir` and below, by relative path, with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = read_file(e.path());
  }
  return files;
}

// Hidden entries (temporaries, interrupted generations) anywhere under `dir`.
std::vector<std::string> hidden_entries(const fs::path& dir) {
  std::vector<std::string> hidden;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().starts_with(".")) hidden.push_back(e.path().string());
  }
  return hidden;
}

class LiveOutputIntegrityTest : public LiveFixtureTest {};

TEST_F(LiveOutputIntegrityTest, KilledAtRandomInstantsEveryDirectoryStaysConsistent) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  BackgroundProcess target = start_target(spin, {"a", "0", "1"});
  std::mt19937 random(20261202);
  std::uniform_int_distribution<int> delay_ms(100, 600);
  constexpr int kRuns = 50;
  int killed_with_output = 0;
  for (int run = 0; run < kRuns; ++run) {
    BackgroundProcess collector =
        start_profcollect({"-q", "-e", "cpu-clock", "-F", "2000", "--flush-interval", "0.01", "-o",
                           out.string(), "--pid", std::to_string(target.pid())});
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    collector.signal(SIGKILL);
    ASSERT_TRUE(collector.wait(kPatience)) << collector.describe();
    if (!fs::exists(out)) continue;
    for (const fs::path& dir : profile_dirs(out, "live_spin")) {
      ++killed_with_output;
      const json meta = read_json_file(dir / "meta.json");
      ASSERT_FALSE(meta.is_discarded()) << dir << " has no readable meta.json after run " << run;
      const StrictFdata fdata = read_fdata_strictly(dir / "bolt.fdata");
      ASSERT_TRUE(fdata.valid()) << dir << ": " << fdata.error << " after run " << run;
      const std::optional<uint64_t> ips = samples_ip_total(dir / "samples.ip");
      ASSERT_TRUE(ips) << dir << "/samples.ip unreadable after run " << run;
      const uint64_t samples = meta.at("samples").get<uint64_t>();
      EXPECT_EQ(samples, fdata.total()) << dir << " after run " << run;
      EXPECT_EQ(samples, *ips) << dir << " after run " << run;
    }
  }
  EXPECT_GT(killed_with_output, 0) << "no run lived long enough to flush";
  // The next run, ended normally, removes what the killed ones left.
  const ProfcollectRun last = run_profcollect({"-q", "-e", "cpu-clock", "-o", out.string(), "--pid",
                                               std::to_string(target.pid()), "--duration", "0.3"});
  ASSERT_EQ(last.run.exit_code, 0) << last.describe();
  EXPECT_EQ(hidden_entries(out), std::vector<std::string>{});
  for (const fs::path& dir : profile_dirs(out, "live_spin")) {
    const json meta = read_json_file(dir / "meta.json");
    ASSERT_FALSE(meta.is_discarded());
    EXPECT_EQ(meta.at("samples").get<uint64_t>(), read_fdata_strictly(dir / "bolt.fdata").total());
    EXPECT_EQ(meta.at("samples").get<uint64_t>(), samples_ip_total(dir / "samples.ip").value_or(0));
  }
}

// The directory name profcollect gives live_spin's profiles: "<basename>-<build-id>", with the
// build-id as readelf prints it.
std::string spin_directory_name(const fs::path& spin) {
  const std::string id = readelf_build_id(spin);
  EXPECT_EQ(id.size(), 40u) << "readelf found no build-id in " << spin;
  return spin.filename().string() + "-" + id;
}

TEST_F(LiveOutputIntegrityTest, PlantedSymlinkAndForeignDirectoryAreNeitherFollowedNorWritten) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to plant another user's directory";
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path shared = tmp / "shared";
  fs::create_directory(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);  // sticky and world-writable, as /tmp
  const std::string name = spin_directory_name(spin);
  BackgroundProcess target = start_target(spin, {"a", "0", "1"});

  // Another user's symlink to a directory of theirs that profcollect must not write into.
  const fs::path victim = tmp / "victim";
  fs::create_directory(victim);
  write_file(victim / "bolt.fdata", "precious\n");
  fs::create_directory_symlink(victim, shared / name);
  ASSERT_EQ(::lchown((shared / name).c_str(), 65534, 65534), 0);
  const auto victim_before = snapshot(victim);
  const ProfcollectRun linked =
      run_profcollect({"-e", "cpu-clock", "-o", shared.string(), "--pid",
                       std::to_string(target.pid()), "--duration", "0.3"});
  EXPECT_NE(linked.run.exit_code, 0) << linked.describe();
  EXPECT_NE(linked.run.err.find((shared / name).string() + ": is a symbolic link: not followed"),
            std::string::npos)
      << linked.describe();
  EXPECT_EQ(snapshot(victim), victim_before);
  EXPECT_TRUE(fs::is_symlink(shared / name));

  // Another user's directory under the same name.
  fs::remove(shared / name);
  fs::create_directory(shared / name);
  write_file(shared / name / "bolt.fdata", "theirs\n");
  ASSERT_EQ(::chown((shared / name).c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chown((shared / name / "bolt.fdata").c_str(), 65534, 65534), 0);
  const auto foreign_before = snapshot(shared / name);
  const ProfcollectRun foreign =
      run_profcollect({"-e", "cpu-clock", "-o", shared.string(), "--pid",
                       std::to_string(target.pid()), "--duration", "0.3"});
  EXPECT_NE(foreign.run.exit_code, 0) << foreign.describe();
  EXPECT_NE(foreign.run.err.find((shared / name).string() + ": belongs to another user"),
            std::string::npos)
      << foreign.describe();
  EXPECT_EQ(snapshot(shared / name), foreign_before);
  struct stat st {};
  ASSERT_EQ(::stat((shared / name).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  // collection.json is still written: only the planted entry's profile is missing.
  EXPECT_FALSE(read_json_file(shared / "collection.json").is_discarded()) << foreign.describe();
}

TEST_F(LiveOutputIntegrityTest, NewDirectoriesAndFilesAreTheOwnersOnly) {
  const fs::path spin = fixture("live_spin");
  TempDir tmp;
  const fs::path out = tmp / "out";
  BackgroundProcess target = start_target(spin, {"a", "0", "1"});
  const ProfcollectRun r = run_profcollect({"-q", "-e", "cpu-clock", "-o", out.string(), "--pid",
                                            std::to_string(target.pid()), "--duration", "0.3"});
  ASSERT_EQ(r.run.exit_code, 0) << r.describe();
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    struct stat st {};
    ASSERT_EQ(::lstat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, S_ISDIR(st.st_mode) ? 0700u : 0600u) << e.path();
  }
}

// A tmpfs of its own, mounted for the test and unmounted after it.
class SmallFileSystem {
 public:
  explicit SmallFileSystem(const fs::path& where, const std::string& size) : where_(where) {
    fs::create_directories(where);
    mounted_ = ::mount("tmpfs", where.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    error_ = mounted_ ? "" : std::strerror(errno);
  }
  ~SmallFileSystem() {
    if (mounted_) ::umount2(where_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  // Fills what is left with one file, to the last byte the file system gives.
  void fill() const {
    std::ofstream filler(where_ / "filler", std::ios::binary);
    const std::string block(4096, 'x');
    while (filler.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
    filler.close();
    std::ofstream bytes(where_ / "filler2", std::ios::binary);
    while (bytes.put('x')) {
    }
  }

 private:
  fs::path where_;
  bool mounted_ = false;
  std::string error_;
};

TEST_F(LiveOutputIntegrityTest, FullFileSystemKeepsThePreviousProfilesAndSaysWhy) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a tmpfs";
  TempDir tmp;
  SmallFileSystem small(tmp / "small", "8m");
  ASSERT_TRUE(small.mounted()) << "mount tmpfs: " << small.error();
  const fs::path out = tmp / "small" / "out";

  // -a with many binaries, into the small file system while it has room.
  const ProfcollectRun first =
      run_profcollect({"-q", "-a", "-e", "cpu-clock", "-o", out.string(), "--duration", "0.5"});
  ASSERT_EQ(first.run.exit_code, 0) << first.describe();
  // convert with several formats, too.
  const FixtureStatus& recorded = convert_fixtures();
  ASSERT_EQ(recorded.state, FixtureState::ready) << recorded.message;
  const fs::path converted = tmp / "small" / "converted";
  const std::vector<std::string> convert = {"convert",
                                            "-p",
                                            (recorded.dir / "hot_gcc.data").string(),
                                            "--format",
                                            "bolt,autofdo,unsymbolized",
                                            "-o",
                                            converted.string(),
                                            "-q",
                                            (recorded.dir / "hot_gcc").string()};
  const ProfcollectRun made = run_profcollect(convert);
  ASSERT_EQ(made.run.exit_code, 0) << made.describe();
  const auto live_before = snapshot(out);
  const auto convert_before = snapshot(converted);
  ASSERT_GT(live_before.size(), 2u);

  small.fill();
  const ProfcollectRun full_convert = run_profcollect(convert);
  EXPECT_NE(full_convert.run.exit_code, 0) << full_convert.describe();
  EXPECT_NE(full_convert.run.err.find(converted.string()), std::string::npos)
      << full_convert.describe();
  EXPECT_NE(full_convert.run.err.find(std::strerror(ENOSPC)), std::string::npos)
      << full_convert.describe();
  EXPECT_EQ(snapshot(converted), convert_before);

  const ProfcollectRun full_live =
      run_profcollect({"-a", "-e", "cpu-clock", "-o", out.string(), "--duration", "0.5"});
  EXPECT_NE(full_live.run.exit_code, 0) << full_live.describe();
  EXPECT_NE(full_live.run.err.find(out.string()), std::string::npos) << full_live.describe();
  EXPECT_NE(full_live.run.err.find(std::strerror(ENOSPC)), std::string::npos)
      << full_live.describe();
  EXPECT_EQ(snapshot(out), live_before) << full_live.describe();
  EXPECT_EQ(hidden_entries(out), std::vector<std::string>{});
}

}  // namespace
}  // namespace profcollect::test
