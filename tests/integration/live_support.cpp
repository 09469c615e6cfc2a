#include "tests/integration/live_support.h"

#include "tests/integration/cpu_time.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace profcollect::test {

namespace fs = std::filesystem;

namespace {

// The set is stale when the script or a source it builds (live_*, hot.c) changes.
FixtureSet& live_set() {
  static FixtureSet set(
      {.name = "live",
       .script = "make_live_fixtures.sh",
       .source_folder = "src",
       .is_source =
           [](std::string_view file) { return file.starts_with("live_") || file == "hot.c"; },
       .timeout = std::chrono::seconds(300)});
  return set;
}
[[maybe_unused]] const bool live_set_registered = register_fixture_set(&live_set);

std::optional<uint64_t> parse_number(std::string_view text, int base) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string file_or_empty(const fs::path& path) {
  try {
    return read_file(path);
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

const FixtureStatus& live_fixtures() { return live_set().status(); }

void LiveFixtureTest::SetUp() { live_set().require_ready(); }

fs::path LiveFixtureTest::fixture(const std::string& name) {
  return fs::weakly_canonical(live_fixtures().dir / name);
}

BackgroundProcess BackgroundProcess::start(const std::vector<std::string>& argv,
                                           const Options& options) {
  BackgroundProcess p;
  p.argv_ = argv;
  p.own_group_ = options.own_process_group;
  std::string pattern = fs::temp_directory_path() / "profcollect-bg-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  p.log_dir_ = pattern;
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  const std::string out_path = p.log_dir_ / "stdout", err_path = p.log_dir_ / "stderr";
  const std::string cwd = options.cwd.string();
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (options.own_process_group) ::setpgid(0, 0);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    if (options.run_as) {
      const gid_t groups[1] = {options.run_as->gid};
      if (::setgroups(1, groups) != 0 ||
          ::setresgid(options.run_as->gid, options.run_as->gid, options.run_as->gid) != 0 ||
          ::setresuid(options.run_as->uid, options.run_as->uid, options.run_as->uid) != 0)
        ::_exit(126);
    }
    // The test runner may block or ignore signals; the program under test must not inherit that.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  // Set it from this side too, so a signal to the group cannot come before the child's setpgid.
  if (options.own_process_group) ::setpgid(pid, pid);
  p.pid_ = pid;
  return p;
}

BackgroundProcess::BackgroundProcess(BackgroundProcess&& other) noexcept
    : pid_(other.pid_),
      own_group_(other.own_group_),
      exit_code_(other.exit_code_),
      argv_(std::move(other.argv_)),
      log_dir_(std::move(other.log_dir_)) {
  other.pid_ = -1;
  other.log_dir_.clear();
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0 && !exit_code_) {
    if (own_group_) ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (!log_dir_.empty()) {
    std::error_code ignored;
    fs::remove_all(log_dir_, ignored);
  }
}

std::optional<int> BackgroundProcess::wait(std::chrono::milliseconds timeout) {
  if (exit_code_ || pid_ <= 0) return exit_code_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void BackgroundProcess::signal(int sig) const {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, sig);
}

void BackgroundProcess::signal_group(int sig) const {
  if (pid_ > 0 && own_group_) ::kill(-pid_, sig);
}

std::string BackgroundProcess::out() const { return file_or_empty(log_dir_ / "stdout"); }
std::string BackgroundProcess::err() const { return file_or_empty(log_dir_ / "stderr"); }

std::string BackgroundProcess::describe() const {
  std::ostringstream text;
  text << "`" << command_line(argv_) << "` ";
  if (exit_code_)
    text << "exited " << *exit_code_;
  else
    text << "still running";
  text << "\nstdout: " << out().substr(0, 2000) << "\nstderr: " << err().substr(0, 4000);
  return text.str();
}

BackgroundProcess start_target(const fs::path& exe, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {exe.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  BackgroundProcess p = BackgroundProcess::start(argv);
  const std::string link = "/proc/" + std::to_string(p.pid()) + "/exe";
  const bool started = wait_until(
      [&] {
        std::error_code ec;
        return fs::read_symlink(link, ec) == exe;
      },
      kPatience);
  EXPECT_TRUE(started) << exe << " did not start";
  return p;
}

BackgroundProcess start_profcollect(const std::vector<std::string>& args,
                                    const BackgroundProcess::Options& options) {
  std::vector<std::string> argv = {profcollect_exe().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return BackgroundProcess::start(argv, options);
}

bool wait_until(const std::function<bool()>& predicate, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (predicate()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool has_perf_event_fd(pid_t pid) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_error;
    if (fs::read_symlink(entry.path(), link_error).string() == "anon_inode:[perf_event]")
      return true;
  }
  return false;
}

uint64_t StrictFdata::total() const {
  uint64_t t = 0;
  for (const auto& [site, count] : counts) t += count;
  return t;
}

std::map<std::string, uint64_t> StrictFdata::per_function() const {
  std::map<std::string, uint64_t> out;
  for (const auto& [site, count] : counts) out[site.first] += count;
  return out;
}

StrictFdata read_fdata_strictly(const fs::path& path) {
  StrictFdata f;
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    f.error = e.what();
    return f;
  }
  if (text.empty() || text.back() != '\n') {
    f.error = path.string() + ": empty or not ending in a newline (cut short?)";
    return f;
  }
  const auto lines = split_lines(text);
  std::istringstream header(lines.at(0));
  std::string word;
  header >> word;
  if (word != "no_lbr") {
    f.error = path.string() + ": first line is not a no_lbr header: " + lines[0];
    return f;
  }
  while (header >> word) {
    if (word.back() != ':') {
      f.error = path.string() + ": header event without its colon: " + lines[0];
      return f;
    }
    f.events.push_back(word);
  }
  if (f.events.empty()) f.error = path.string() + ": header names no event";
  for (size_t i = 1; i < lines.size() && f.valid(); ++i) {
    std::istringstream in(lines[i]);
    std::vector<std::string> fields;
    while (in >> word) fields.push_back(word);
    std::optional<uint64_t> offset, count;
    if (fields.size() == 4 && fields[0] == "1") {
      offset = parse_number(fields[2], 16);
      count = parse_number(fields[3], 10);
    }
    if (!offset || !count || *count == 0) {
      f.error = path.string() + ": line " + std::to_string(i + 1) + " malformed: " + lines[i];
      break;
    }
    if (!f.counts.emplace(std::make_pair(fields[1], *offset), *count).second) {
      f.error = path.string() + ": line " + std::to_string(i + 1) + " repeats a site: " + lines[i];
    }
  }
  return f;
}

nlohmann::json read_json_file(const fs::path& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception&) {
    return nlohmann::json::value_t::discarded;
  }
  return nlohmann::json::parse(text, nullptr, false);
}

std::vector<fs::path> profile_dirs(const fs::path& out, const std::string& basename) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out, ec)) {
    if (entry.is_directory() && entry.path().filename().string().starts_with(basename + "-"))
      dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

CommandResult perf_record(const fs::path& data, const std::vector<std::string>& record_args,
                          unsigned frequency) {
  // --buildid-mmap: the build-ids come in perf's own MMAP2 records. Without it, a profcollect
  // running at the same time (it takes build-ids) makes the kernel flag perf's records as
  // carrying one over a device/inode body, and perf 6.1 aborts reading them (see
  // convert_stale_build_id_flag_test.cpp).
  std::vector<std::string> argv = {"perf",
                                   "record",
                                   "-q",
                                   "-N",
                                   "--buildid-mmap",
                                   "-e",
                                   "cpu-clock",
                                   "-F",
                                   std::to_string(frequency),
                                   "-o",
                                   data.string()};
  argv.insert(argv.end(), record_args.begin(), record_args.end());
  CommandResult r = run_command(argv, {.cwd = {}, .timeout = kPatience});
  if (r.exit_code != 0) r.err = r.describe(argv);
  return r;
}

std::optional<PerfFunctionShares> perf_function_shares(const fs::path& data, const fs::path& binary,
                                                       std::string& error) {
  const auto samples = perf_script_samples(data, error);
  if (!samples) return std::nullopt;
  const std::string path = fs::weakly_canonical(binary).string();
  PerfFunctionShares shares;
  for (const auto& s : *samples) {
    ++shares.total;
    if (s.dso == "[kernel.kallsyms]" || s.ip >= 0xffff800000000000) ++shares.kernel;
    if (s.dso != path) continue;
    ++shares.in_binary;
    ++shares.per_function[s.symbol];
  }
  return shares;
}

std::string readelf_build_id(const fs::path& binary) {
  const std::vector<std::string> argv = {"readelf", "-n", binary.string()};
  const CommandResult r = run_command(argv);
  static const std::regex build_id(R"(Build ID: ([0-9a-f]+))");
  std::smatch match;
  if (r.exit_code != 0 || !std::regex_search(r.out, match, build_id)) return {};
  return match[1].str();
}

std::string share_table(const std::map<std::string, uint64_t>& ours, uint64_t our_total,
                        const std::map<std::string, uint64_t>& theirs, uint64_t their_total) {
  std::map<std::string, std::pair<double, double>> rows;
  for (const auto& [name, n] : ours) rows[name].first = points(n, our_total);
  for (const auto& [name, n] : theirs) rows[name].second = points(n, their_total);
  std::ostringstream text;
  text.precision(2);
  text << std::fixed;
  for (const auto& [name, row] : rows)
    text << "  " << (name.empty() ? "[unknown]" : name) << ": ours " << row.first << "% vs "
         << row.second << "%\n";
  return text.str();
}

// Sends `command` through perf record's control FIFO and waits for its "ack". perf opens the
// FIFOs itself, so the open is retried until it has (ENXIO: no reader yet).
bool perf_control(const fs::path& ctl, const fs::path& ack, const std::string& command) {
  int fd = -1;
  if (!wait_until(
          [&] { return (fd = ::open(ctl.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0; },
          kPatience))
    return false;
  const std::string line = command + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  if (!written) return false;
  const int ack_fd = ::open(ack.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (ack_fd < 0) return false;
  std::string got;
  const bool acked = wait_until(
      [&] {
        char buf[64];
        const ssize_t n = ::read(ack_fd, buf, sizeof buf);
        if (n > 0) got.append(buf, static_cast<size_t>(n));
        return got.find("ack") != std::string::npos;
      },
      kPatience);
  ::close(ack_fd);
  return acked;
}

std::optional<RunAs> test_user(std::string& error) {
  if (::getpwnam(kTestUser) == nullptr) {
    const std::vector<std::string> argv = {"useradd", "--system",          "--no-create-home",
                                           "--shell", "/usr/sbin/nologin", kTestUser};
    const CommandResult r = run_command(argv);
    if (r.exit_code != 0) {
      error = r.describe(argv);
      return std::nullopt;
    }
  }
  const passwd* pw = ::getpwnam(kTestUser);
  if (pw == nullptr) {
    error = std::string("no user ") + kTestUser + " after useradd";
    return std::nullopt;
  }
  return RunAs{pw->pw_uid, pw->pw_gid};
}

namespace {

bool write_number(const std::filesystem::path& file, int value) {
  std::ofstream out(file);
  out << value << "\n";
  out.close();
  return static_cast<bool>(out);
}

}  // namespace

SysctlSetting::SysctlSetting(std::filesystem::path file, int value) : file_(std::move(file)) {
  std::ifstream in(file_);
  if (!(in >> saved_)) return;
  ok_ = write_number(file_, value);
}

SysctlSetting::~SysctlSetting() {
  if (ok_) write_number(file_, saved_);
}

BackgroundProcess::Options run_in_own_directory(const RunAs& user,
                                                const std::filesystem::path& dir) {
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  const fs::path home = dir / "user";
  fs::create_directory(home);
  if (::chown(home.c_str(), user.uid, user.gid) != 0) {
    throw std::runtime_error("cannot give " + home.string() + " to uid " +
                             std::to_string(user.uid) + ": " + std::strerror(errno));
  }
  return BackgroundProcess::Options{.cwd = home, .own_process_group = false, .run_as = user};
}

}  // namespace profcollect::test
