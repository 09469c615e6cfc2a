// Issue 12, acceptance 4, for the daemon's output directory: a symbolic link planted in it is
// never followed -- under a binary's directory name (that binary is skipped and said, and
// written once the link is gone), as a file in a binary's directory (replaced with the rest of
// that directory's generation, or -- met when the directory is first read -- set aside with its
// other files and said; either way the profile is written in place), as collection.json
// (replaced, not written through) -- and the daemon keeps running; an output_dir that is itself a link
// is refused at start. Nothing the daemon creates there is open to other users, and its control
// socket is 0660. (The uid refusal is in daemon_control_test.cpp.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/integration/cpu_time.h"
#include "tests/integration/daemon_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class DaemonOutputSafetyTest : public SpoolFixtureTest {
 protected:
  fs::path out() const { return tmp_ / "out"; }
  fs::path socket() const { return tmp_ / "run" / "ctl"; }
  std::string config_text(const fs::path& output_dir, const std::vector<fs::path>& programs) const {
    std::string binaries;
    for (const fs::path& p : programs)
      binaries += (binaries.empty() ? "" : ", ") + exact_path_pattern(p);
    return "output_dir = \"" + output_dir.string() + "\"\nsocket = \"" + socket().string() +
           "\"\nevent = \"cpu-clock\"\nfrequency = 1000\nflush_interval = \"1h\"\nbinaries = [" +
           binaries + "]\n";
  }
  TempDir tmp_;
};

// One run of a spool program (SECONDS of CPU time, then "idle" and asleep until SIGUSR1).
void run_once(BackgroundProcess& p, size_t runs) {
  if (runs > 1) p.signal(SIGUSR1);
  ASSERT_TRUE(wait_until(
      [&] {
        size_t idle = 0;
        for (const std::string& line : split_lines(p.out())) idle += line == "idle";
        return idle >= runs;
      },
      kPatience))
      << p.describe();
}

std::string directory_of(const fs::path& program) {
  const std::string id = readelf_build_id(program);
  EXPECT_EQ(id.size(), 40u) << program;
  return program.filename().string() + "-" + id;
}

// Content and modification time of every file under `dir`, links not followed.
std::map<std::string, std::pair<std::string, int64_t>> state_of(const fs::path& dir) {
  std::map<std::string, std::pair<std::string, int64_t>> s;
  auto add = [&](const fs::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return;
    s[p.string()] = {S_ISREG(st.st_mode) ? read_file(p) : std::string(),
                     st.st_mtim.tv_sec * 1'000'000'000 + st.st_mtim.tv_nsec};
  };
  add(dir);
  if (fs::is_directory(fs::symlink_status(dir))) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) add(e.path());
  }
  return s;
}

TEST_F(DaemonOutputSafetyTest, PlantedLinksAreNotFollowedAndNothingItCreatesIsOpenToOthers) {
  const fs::path a = spool_fixture("spool_safe_0"), b = spool_fixture("spool_safe_1"),
                 c = spool_fixture("spool_safe_2");
  const std::string a_dir = directory_of(a), b_dir = directory_of(b), c_dir = directory_of(c);
  // What the planted links point to, outside the output directory.
  const fs::path outside = tmp_ / "outside";
  fs::create_directories(outside / "dir");
  write_text(outside / "dir" / "bolt.fdata", "precious directory\n");
  write_text(outside / "file", "precious file\n");
  write_text(outside / "collection", "precious collection\n");
  const auto outside_before = state_of(outside);

  const fs::path config = tmp_ / "profcollect.toml";
  write_text(config, config_text(out(), {a, b, c}));
  NotifyListener notify(tmp_ / "notify");
  BackgroundProcess daemon = start_daemon(config, notify);
  ASSERT_TRUE(notify.wait_for("READY=1", kPatience)) << daemon.describe() << notify.describe();
  struct stat st {};
  ASSERT_EQ(::stat(socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u) << "the control socket";

  // B is written once, as usual.
  BackgroundProcess pb = start_target(b, {"0.1"});
  run_once(pb, 1);
  ASSERT_EQ(run_ctl(socket(), {"flush"}).exit_code, 0) << daemon.describe();
  ASSERT_TRUE(fs::exists(out() / b_dir / "bolt.fdata")) << daemon.describe();

  // The links: A's directory name; bolt.fdata in B's directory (which this daemon has read) and
  // in a directory of C's that an earlier run would have left (which it reads at C's first
  // flush); collection.json.
  fs::create_directory_symlink(outside / "dir", out() / a_dir);
  fs::remove(out() / b_dir / "bolt.fdata");
  fs::create_symlink(outside / "file", out() / b_dir / "bolt.fdata");
  fs::create_directory(out() / c_dir);
  fs::permissions(out() / c_dir, fs::perms::owner_all);  // as the daemon would have made it
  fs::create_symlink(outside / "file", out() / c_dir / "bolt.fdata");
  fs::remove(out() / "collection.json");
  fs::create_symlink(outside / "collection", out() / "collection.json");

  BackgroundProcess pa = start_target(a, {"0.1"}), pc = start_target(c, {"0.1"});
  run_once(pa, 1);
  run_once(pb, 2);
  run_once(pc, 1);
  const CtlRun flush = run_ctl(socket(), {"flush"});
  // A could not be written: the flush says so, and the daemon goes on.
  EXPECT_EQ(flush.exit_code, 1) << flush.describe();
  EXPECT_NE(flush.reply.value("error", "").find("the flush failed"), std::string::npos)
      << flush.describe();
  EXPECT_TRUE(daemon.running()) << daemon.describe();
  EXPECT_EQ(state_of(outside), outside_before) << "a planted link was followed\n"
                                               << daemon.describe();
  const std::string log = daemon.err();
  EXPECT_NE(log.find((out() / a_dir).string() + ": is a symbolic link: not followed"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find((out() / c_dir / "bolt.fdata").string() +
                     ": is a symbolic link: not followed; the directory's "
                     "earlier files were set aside"),
            std::string::npos)
      << log;
  EXPECT_TRUE(fs::is_symlink(out() / a_dir));
  // The reply, and the status after it, name the binary that was not written and why: a daemon
  // failing its flushes does not look healthy.
  EXPECT_NE(flush.reply.value("error", "").find(a.string() + ": "), std::string::npos)
      << flush.describe();
  ASSERT_TRUE(flush.reply.contains("failures")) << flush.describe();
  const CtlRun health = run_ctl(socket(), {"status"});
  ASSERT_EQ(health.exit_code, 0) << health.describe();
  const nlohmann::json& last = health.reply["last_flush"];
  EXPECT_EQ(last.value("ok", true), false) << health.describe();
  bool named = false;
  for (const auto& f : last["failures"]) {
    named = named || (f.value("binary", "") == a.string() && f.value("directory", "") == a_dir &&
                      f.value("reason", "").find("symbolic link") != std::string::npos);
  }
  EXPECT_TRUE(named) << health.describe();
  const CtlRun said = run_ctl(socket(), {"status"}, std::nullopt, /*json=*/false);
  EXPECT_NE(said.out.find("last flush "), std::string::npos) << said.describe();
  EXPECT_NE(said.out.find(": FAILED"), std::string::npos) << said.describe();
  EXPECT_NE(said.out.find("  " + a.string() + ": "), std::string::npos) << said.describe();

  // B's and C's profiles are written in place: B's link went with the generation it was planted
  // in; C's, met when its directory was first read, is kept aside.
  for (const std::string& dir : {b_dir, c_dir}) {
    EXPECT_FALSE(fs::is_symlink(out() / dir / "bolt.fdata")) << dir;
    const StrictFdata fdata = read_fdata_strictly(out() / dir / "bolt.fdata");
    ASSERT_TRUE(fdata.valid()) << dir << ": " << fdata.error;
    EXPECT_GT(fdata.total(), 0u);
    const nlohmann::json meta = read_json_file(out() / dir / "meta.json");
    EXPECT_EQ(meta.value("samples", uint64_t{0}), fdata.total()) << meta.dump();
  }
  size_t set_aside_links = 0;
  for (const auto& e : fs::directory_iterator(out() / c_dir)) {
    if (e.is_symlink() && e.path().filename().string().starts_with("bolt.fdata.unreadable-"))
      ++set_aside_links;
  }
  EXPECT_EQ(set_aside_links, 1u) << "the planted link was not kept aside";
  // collection.json is replaced by the daemon's own file.
  EXPECT_FALSE(fs::is_symlink(out() / "collection.json"));
  EXPECT_FALSE(read_json_file(out() / "collection.json").is_discarded());
  EXPECT_EQ(run_ctl(socket(), {"status"}).exit_code, 0) << daemon.describe();

  // Once the link is gone A is written, with the counts the daemon kept for it.
  fs::remove(out() / a_dir);
  daemon.signal(SIGTERM);
  ASSERT_EQ(daemon.wait(kPatience), std::optional<int>(0)) << daemon.describe();
  const StrictFdata a_fdata = read_fdata_strictly(out() / a_dir / "bolt.fdata");
  ASSERT_TRUE(a_fdata.valid()) << a_fdata.error << daemon.describe();
  EXPECT_GT(a_fdata.total(), 0u);
  EXPECT_EQ(state_of(outside), outside_before);

  // Nothing the daemon made is open to other users (the planted links aside: a link has no mode).
  ASSERT_EQ(::lstat(out().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  for (const auto& e : fs::recursive_directory_iterator(out())) {
    ASSERT_EQ(::lstat(e.path().c_str(), &st), 0) << e.path();
    if (S_ISLNK(st.st_mode)) continue;
    EXPECT_EQ(st.st_mode & S_IRWXO, 0u)
        << e.path() << " is open to others: " << std::oct << (st.st_mode & 07777);
    EXPECT_EQ(st.st_mode & 07777, S_ISDIR(st.st_mode) ? 0700u : 0600u) << e.path();
  }
}

TEST_F(DaemonOutputSafetyTest, AnOutputDirThatIsALinkIsRefusedAtStart) {
  fs::create_directories(tmp_ / "elsewhere");
  fs::create_directory_symlink(tmp_ / "elsewhere", tmp_ / "linked");
  const fs::path config = tmp_ / "profcollect.toml";
  write_text(config, config_text(tmp_ / "linked", {spool_fixture("spool_safe_0")}));
  const ProfcollectRun run = run_profcollect({"daemon", "--config", config.string()});
  EXPECT_EQ(run.run.exit_code, 1) << run.describe();
  EXPECT_NE(run.run.err.find((tmp_ / "linked").string() +
                             ": output_dir is a symbolic link: the daemon does not follow it (name "
                             "the directory itself)"),
            std::string::npos)
      << run.describe();
  EXPECT_TRUE(fs::is_empty(tmp_ / "elsewhere"));
  EXPECT_FALSE(fs::exists(socket()));
}

}  // namespace
}  // namespace profcollect::test
