// Issue 24: live collection, the daemon and merge on BOLTed binaries. `profcollect -- ./prog.bolt`
// and the daemon write the input binary's profile through BAT (every sample on an instruction of
// the input binary, meta.json naming both build-ids); merge adds it to the input binary's own
// profile line by line (merge-fdata refuses to mix the two, so the judge is the per-line sums);
// a BOLTed binary without BAT, or with a damaged one, is said once and profiled as it is.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "mapper/elf_binary.h"
#include "tests/integration/bat_fixtures.h"
#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class BatLive : public BatFixtureTest {
 protected:
  // `profcollect -o OUT -- BINARY ARGS...`, which must exit 0; its result.
  static CommandResult collect(const fs::path& out, const fs::path& binary,
                               const std::vector<std::string>& args) {
    std::vector<std::string> argv = {profcollect_exe().string(), "-o", out.string(), "--",
                                     binary.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = run_command(argv, {.timeout = kPatience});
    EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
    return r;
  }
  // The one profile directory of `basename` under `out`.
  static fs::path only_dir(const fs::path& out, const std::string& basename) {
    const std::vector<fs::path> dirs = profile_dirs(out, basename);
    EXPECT_EQ(dirs.size(), 1u) << ::testing::PrintToString(dirs);
    return dirs.empty() ? fs::path() : dirs[0];
  }
  // Every sample of a translated no_lbr profile lies on an instruction of `input`'s function.
  static void expect_on_instructions(const FdataFile& f, const fs::path& input) {
    const auto starts = instruction_starts(input);
    for (const auto& [site, count] : f.samples) {
      const auto it = starts.find(plain_name(site.first));
      ASSERT_NE(it, starts.end()) << site.first << " is no function of " << input;
      EXPECT_TRUE(it->second.count(site.second))
          << site.first << "+0x" << std::hex << site.second << " is no instruction start";
    }
  }
};

TEST_F(BatLive, CommandWritesTheInputsProfileAndMergeAddsItToTheInputsOwnLineByLine) {
  TempDir tmp;
  const fs::path bolted_out = tmp / "bolted", own_out = tmp / "own", merged_out = tmp / "merged";
  const CommandResult run = collect(bolted_out, fixture("bat_prog_pie.bolt"), {"5000000"});
  collect(own_out, fixture("bat_prog_pie"), {"5000000"});
  const fs::path bolted_dir = only_dir(bolted_out, "bat_prog_pie.bolt");
  const fs::path own_dir = only_dir(own_out, "bat_prog_pie");
  ASSERT_FALSE(bolted_dir.empty() || own_dir.empty());

  const FdataFile translated = read_fdata_file(bolted_dir / "bolt.fdata");
  EXPECT_TRUE(translated.bolted_collection);
  EXPECT_EQ(translated.no_lbr_header.rfind("no_lbr", 0), 0u);
  ASSERT_GT(translated.total, 1000u);
  ASSERT_TRUE(translated.per_function.count("work") && translated.per_function.count("alt_entry"))
      << read_file(bolted_dir / "bolt.fdata");
  expect_on_instructions(translated, fixture("bat_prog_pie"));
  const nlohmann::json meta = read_json_file(bolted_dir / "meta.json");
  ASSERT_TRUE(meta.contains("bolt_address_translation")) << meta.dump();
  const nlohmann::json& bat = meta["bolt_address_translation"];
  EXPECT_EQ(bat["status"], "translated");
  EXPECT_EQ(meta["build_id"], readelf_build_id(fixture("bat_prog_pie.bolt")));
  EXPECT_EQ(bat["input_build_id"], readelf_build_id(fixture("bat_prog_pie")));
  EXPECT_GT(bat["samples_translated"].get<uint64_t>(), translated.total / 2);

  const std::vector<std::string> report = {profcollect_exe().string(), "report",
                                           bolted_out.string()};
  const CommandResult r = run_command(report);
  ASSERT_EQ(r.exit_code, 0) << r.describe(report);
  EXPECT_NE(r.out.find("BAT translated"), std::string::npos) << r.out;

  const std::vector<std::string> merge = {
      profcollect_exe().string(), "merge",         "-o", merged_out.string(),
      bolted_out.string(),        own_out.string()};
  const CommandResult m = run_command(merge);
  ASSERT_EQ(m.exit_code, 0) << m.describe(merge);
  // One directory: the input binary's, by its build-id.
  const fs::path merged_dir = only_dir(merged_out, "bat_prog_pie");
  ASSERT_FALSE(merged_dir.empty());
  EXPECT_EQ(merged_dir.filename().string(),
            "bat_prog_pie-" + readelf_build_id(fixture("bat_prog_pie")));
  EXPECT_TRUE(profile_dirs(merged_out, "bat_prog_pie.bolt").empty());
  const FdataFile own = read_fdata_file(own_dir / "bolt.fdata");
  const FdataFile sum = read_fdata_file(merged_dir / "bolt.fdata");
  EXPECT_TRUE(sum.bolted_collection);
  std::map<std::pair<std::string, uint64_t>, uint64_t> expected = own.samples;
  for (const auto& [site, count] : translated.samples) expected[site] += count;
  EXPECT_EQ(sum.samples, expected);
  const nlohmann::json merged_meta = read_json_file(merged_dir / "meta.json");
  EXPECT_EQ(merged_meta["build_id"], readelf_build_id(fixture("bat_prog_pie")));
  EXPECT_EQ(merged_meta["bolt_address_translation"]["status"], "merged") << merged_meta.dump();
  EXPECT_EQ(merged_meta["bolt_address_translation"]["bolted_build_ids"][0],
            readelf_build_id(fixture("bat_prog_pie.bolt")));
  // The input's own samples file only: the BOLTed one is in another layout.
  EXPECT_EQ(read_file(merged_dir / "samples.ip"), read_file(own_dir / "samples.ip"));
  const std::vector<std::string> check = {profcollect_exe().string(), "report",
                                          merged_out.string()};
  const CommandResult c = run_command(check);
  ASSERT_EQ(c.exit_code, 0) << c.describe(check);
  EXPECT_NE(c.out.find("merged with profiles that BAT translated"), std::string::npos) << c.out;
}

TEST_F(BatLive, BoltedWithoutBatIsSaidOnceAndProfiledInItsOwnLayout) {
  TempDir tmp;
  const CommandResult run = collect(tmp / "out", fixture("bat_prog.nobat"), {"3000000"});
  size_t said = 0;
  for (size_t at = run.err.find("without BAT"); at != std::string::npos;
       at = run.err.find("without BAT", at + 1))
    ++said;
  EXPECT_EQ(said, 1u) << run.err;
  const fs::path dir = only_dir(tmp / "out", "bat_prog.nobat");
  ASSERT_FALSE(dir.empty());
  const FdataFile f = read_fdata_file(dir / "bolt.fdata");
  EXPECT_FALSE(f.bolted_collection);
  const nlohmann::json meta = read_json_file(dir / "meta.json");
  EXPECT_EQ(meta["bolt_address_translation"]["status"], "no_table") << meta.dump();
}

// The BAT note of a copy of the BOLTed binary, damaged in place: its bytes from `at` on replaced.
void damage_bat(const fs::path& binary, size_t at, const std::vector<uint8_t>& bytes) {
  const auto elf = ElfBinary::open(binary.string());
  const ElfSection* bat = elf->section_by_name(".note.bolt_bat");
  ASSERT_TRUE(bat);
  ASSERT_LE(at + bytes.size(), bat->size);
  const int fd = ::open(binary.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(bat->offset + at)),
            static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

TEST_F(BatLive, ADamagedTableIsSaidOnceAndTheBinaryProfiledUntranslated) {
  struct Damage {
    const char* what;
    size_t at;
    std::vector<uint8_t> bytes;
  };
  // The note: namesz (4), descsz (4), type (4), "BOLT\0" padded to 8, then the tables.
  const std::vector<Damage> damages = {
      {"description larger than the section", 4, {0xff, 0xff, 0xff, 0x00}},
      {"not BAT's note type", 8, {2, 0, 0, 0}},
      {"more hot functions than the table holds", 20, {0xff, 0x7f}},
      {"a count that does not end", 20, {0x80, 0x80, 0x80, 0x80}},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    TempDir tmp;
    // The same name as the recorded file, so that convert takes its samples.
    const fs::path copy = tmp / "bat_prog.bolt";
    fs::copy_file(fixture("bat_prog.bolt"), copy);
    damage_bat(copy, d.at, d.bytes);
    const fs::path out = tmp / "out.fdata";
    const std::vector<std::string> argv = {profcollect_exe().string(),
                                           "convert",
                                           "-p",
                                           fixture("bat_prog.bolt.ip.data").string(),
                                           "-o",
                                           out.string(),
                                           copy.string()};
    const CommandResult r = run_command(argv);
    ASSERT_EQ(r.exit_code, 0) << r.describe(argv);
    size_t said = 0;
    for (size_t at = r.err.find("is unreadable"); at != std::string::npos;
         at = r.err.find("is unreadable", at + 1))
      ++said;
    EXPECT_EQ(said, 1u) << r.err;
    const FdataFile f = read_fdata_file(out);
    EXPECT_FALSE(f.bolted_collection);
    // Untranslated: the BOLTed binary's own fragments are named.
    EXPECT_TRUE(f.per_function.count("work.cold.0/1")) << read_file(out);
  }
}

// The daemon's flushes write the translated profile and keep it current.
TEST_F(BatLive, DaemonFlushesTheTranslatedProfileAndKeepsItCurrent) {
  TempDir tmp;
  const fs::path out = tmp / "out", socket = tmp / "ctl", config = tmp / "profcollect.toml";
  write_text(config, "output_dir = \"" + out.string() + "\"\nsocket = \"" + socket.string() +
                         "\"\nevent = \"cpu-clock\"\nfrequency = 4000\nflush_interval = \"1h\"\n"
                         "binaries = [" +
                         exact_path_pattern(fixture("bat_prog_pie.bolt")) + "]\n");
  BackgroundProcess target = start_target(fixture("bat_prog_pie.bolt"), {"2000000000"});
  NotifyListener notify(tmp / "notify");
  BackgroundProcess daemon = start_daemon(config, notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 200ms, kPatience));
  const CtlRun first = run_ctl(socket, {"flush"});
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const fs::path dir = only_dir(out, "bat_prog_pie.bolt");
  ASSERT_FALSE(dir.empty()) << daemon.describe();
  const FdataFile before = read_fdata_file(dir / "bolt.fdata");
  EXPECT_TRUE(before.bolted_collection);
  ASSERT_GT(before.total, 0u);
  expect_on_instructions(before, fixture("bat_prog_pie"));

  ASSERT_TRUE(wait_for_cpu_time(target.pid(), 200ms, kPatience));
  const CtlRun second = run_ctl(socket, {"flush"});
  ASSERT_EQ(second.exit_code, 0) << second.describe();
  const FdataFile after = read_fdata_file(dir / "bolt.fdata");
  EXPECT_TRUE(after.bolted_collection);
  EXPECT_GT(after.total, before.total);
  for (const auto& [site, count] : before.samples) {
    EXPECT_GE(after.samples.count(site) ? after.samples.at(site) : 0, count) << site.first;
  }
  expect_on_instructions(after, fixture("bat_prog_pie"));
  const nlohmann::json meta = read_json_file(dir / "meta.json");
  EXPECT_EQ(meta["bolt_address_translation"]["status"], "translated") << meta.dump();
  target.signal(SIGKILL);
  daemon.signal(SIGTERM);
  EXPECT_TRUE(daemon.wait(kPatience)) << daemon.describe();
}

}  // namespace
}  // namespace profcollect::test
