#include "tests/integration/systemd_container.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

extern char** environ;

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kSuite = "bookworm";
// Making the tree downloads and unpacks about 200 MB: minutes on a slow mirror.
constexpr seconds kDebootstrapTimeout{1800};
constexpr seconds kAptTimeout{900};
constexpr seconds kPowerOffTimeout{90};

fs::path cache_dir() {
  const char* env = std::getenv("PROFCOLLECT_TEST_CACHE");
  return env && *env ? fs::path(env) : fs::path("/var/cache/profcollect-tests");
}

// Holds an exclusive flock on a file for its lifetime (the tree is shared by test processes).
class FileLock {
 public:
  explicit FileLock(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

std::string tail(const std::string& text, size_t bytes = 4000) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

// The URI apt's own sources on this machine take the suite from: the deb822 file Debian 12
// writes, else a one-line `deb URI bookworm ...` entry; PROFCOLLECT_TEST_MIRROR overrides it.
std::optional<std::string> apt_mirror() {
  if (const char* env = std::getenv("PROFCOLLECT_TEST_MIRROR"); env && *env) return env;
  std::ifstream deb822("/etc/apt/sources.list.d/debian.sources");
  std::string line, uris;
  bool suite = false;
  auto block_end = [&]() -> std::optional<std::string> {
    std::optional<std::string> found;
    if (suite && !uris.empty()) found = uris.substr(0, uris.find(' '));
    suite = false;
    uris.clear();
    return found;
  };
  while (std::getline(deb822, line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      if (auto found = block_end()) return found;
    } else if (line.rfind("URIs:", 0) == 0) {
      uris = line.substr(line.find_first_not_of(" \t", 5));
    } else if (line.rfind("Suites:", 0) == 0) {
      std::istringstream suites(line.substr(7));
      std::string s;
      while (suites >> s) suite = suite || s == kSuite;
    }
  }
  if (auto found = block_end()) return found;

  std::ifstream list("/etc/apt/sources.list");
  const std::regex deb(R"(^\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+bookworm\s)");
  std::smatch match;
  while (std::getline(list, line))
    if (std::regex_search(line, match, deb)) return match[2].str();
  return std::nullopt;
}

// The Debian packages holding the shared libraries `exe` links, as ldd resolves them here.
std::vector<std::string> library_packages(const fs::path& exe, std::string& error) {
  const CommandResult ldd = run_command({"ldd", exe.string()});
  if (ldd.exit_code != 0) {
    error = ldd.describe({"ldd", exe.string()});
    return {};
  }
  // dpkg knows a library by the path its package ships, which the merged /usr may hide: each is
  // asked for under every spelling, in one query (dpkg-query -S reads every file list).
  const std::regex resolved(R"(=>\s+(/\S+)\s+\()");
  std::vector<std::vector<std::string>> spellings;
  std::vector<std::string> query = {"dpkg-query", "-S"};
  for (const std::string& line : split_lines(ldd.out)) {
    std::smatch match;
    if (!std::regex_search(line, match, resolved)) continue;
    const fs::path path = match[1].str();
    std::vector<std::string> names = {path.string(), fs::weakly_canonical(path).string()};
    for (const std::string& p : std::vector<std::string>(names))
      names.push_back(p.rfind("/usr/", 0) == 0 ? p.substr(4) : "/usr" + p);
    query.insert(query.end(), names.begin(), names.end());
    spellings.push_back(std::move(names));
  }
  // "libdw1:amd64: /lib/x86_64-linux-gnu/libdw.so.1" for each spelling dpkg knows.
  std::map<std::string, std::string> owner_of;
  for (const std::string& line : split_lines(run_command(query).out)) {
    const size_t separator = line.find(": ");
    if (separator == std::string::npos || line.starts_with("diversion ")) continue;
    const std::string package = line.substr(0, line.find_first_of(":,"));
    owner_of[line.substr(separator + 2)] = package;
  }
  std::set<std::string> packages;
  for (const std::vector<std::string>& names : spellings) {
    const auto known = std::find_if(names.begin(), names.end(),
                                    [&](const std::string& n) { return owner_of.count(n) > 0; });
    if (known == names.end()) {
      error = names.front() + " (linked by " + exe.string() + ") belongs to no Debian package";
      return {};
    }
    packages.insert(owner_of[*known]);
  }
  return {packages.begin(), packages.end()};
}

// Those of `packages` that the tree's dpkg database does not list as installed.
std::vector<std::string> missing_packages(const fs::path& root,
                                          const std::vector<std::string>& packages) {
  std::vector<std::string> missing;
  for (const std::string& package : packages) {
    const CommandResult status =
        run_command({"dpkg-query", "--admindir=" + (root / "var/lib/dpkg").string(), "-W",
                     "-f=${Status}", package});
    if (status.out.find("install ok installed") == std::string::npos) missing.push_back(package);
  }
  return missing;
}

// Words by which debootstrap and apt say the mirror could not be reached.
bool mirror_unreachable(const std::string& log) {
  for (const char* sign :
       {"Failed getting release file", "Failed getting release signature file",
        "Temporary failure resolving", "Could not resolve", "Network is unreachable",
        "Connection timed out", "Connection refused", "Unable to connect to"})
    if (log.find(sign) != std::string::npos) return true;
  return false;
}

ContainerTree make_tree() {
  ContainerTree tree;
  const auto started = Clock::now();
  if (::geteuid() != 0) {
    tree.state = ContainerTreeState::unavailable;
    tree.message = "making and booting a container needs root (debootstrap, mount, systemd-nspawn)";
    return tree;
  }
  for (const char* tool : {"debootstrap", "systemd-nspawn", "nsenter", "dpkg-query", "ldd"}) {
    if (!have_executable(tool)) {
      tree.message = std::string(tool) + " is not installed (tests/install-deps.sh installs it)";
      return tree;
    }
  }
  std::string error;
  // systemd and dbus make the system; procps has the /bin/kill of the unit's ExecReload.
  std::vector<std::string> packages = {"systemd", "dbus", "procps"};
  const std::vector<std::string> libraries = library_packages(profcollect_exe(), error);
  packages.insert(packages.end(), libraries.begin(), libraries.end());
  if (!error.empty()) {
    tree.message = error;
    return tree;
  }
  const std::optional<std::string> mirror = apt_mirror();
  if (!mirror) {
    tree.message =
        "no bookworm mirror in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list";
    return tree;
  }

  const fs::path cache = cache_dir();
  fs::create_directories(cache);
  fs::permissions(cache, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  tree.root = cache / kSuite;
  const FileLock lock(cache / (std::string(kSuite) + ".lock"));
  if (!lock.held()) {
    tree.message = "cannot lock " + (cache / (std::string(kSuite) + ".lock")).string();
    return tree;
  }
  const fs::path stamp = cache / (std::string(kSuite) + ".stamp");
  if (!fs::exists(stamp)) {
    // A tree without its stamp is what an interrupted debootstrap left: made again.
    const fs::path partial = cache / (std::string(kSuite) + ".partial");
    fs::remove_all(partial);
    fs::remove_all(tree.root);
    std::string include;
    for (const std::string& package : packages) include += (include.empty() ? "" : ",") + package;
    const std::vector<std::string> argv = {"debootstrap",          "--variant=minbase",
                                           "--include=" + include, kSuite,
                                           partial.string(),       *mirror};
    const CommandResult run = run_command(argv, {.cwd = {}, .timeout = kDebootstrapTimeout});
    if (run.exit_code != 0) {
      tree.state = mirror_unreachable(run.out + run.err) ? ContainerTreeState::unavailable
                                                         : ContainerTreeState::failed;
      tree.message = (tree.state == ContainerTreeState::unavailable
                          ? "debootstrap cannot reach the mirror " + *mirror + ": "
                          : std::string()) +
                     run.describe(argv) + "\n" + tail(run.out);
      return tree;
    }
    fs::rename(partial, tree.root);
    write_file(stamp, command_line(argv) + "\n");
  }

  // A build may link a library the tree was made without (or the list grew): its package is added.
  const std::vector<std::string> missing = missing_packages(tree.root, packages);
  if (!missing.empty()) {
    std::vector<std::string> argv = {"chroot", tree.root.string(), "sh", "-c",
                                     "apt-get update -qq && DEBIAN_FRONTEND=noninteractive "
                                     "apt-get install -y -qq --no-install-recommends"};
    for (const std::string& package : missing) argv.back() += " " + package;
    const CommandResult run = run_command(argv, {.cwd = {}, .timeout = kAptTimeout});
    if (run.exit_code != 0) {
      tree.state = mirror_unreachable(run.out + run.err) ? ContainerTreeState::unavailable
                                                         : ContainerTreeState::failed;
      tree.message = run.describe(argv);
      return tree;
    }
  }
  tree.state = ContainerTreeState::ready;
  tree.made_in = std::chrono::duration_cast<milliseconds>(Clock::now() - started);
  return tree;
}

// nspawn refuses to start when /run/systemd/nspawn is on the root file system ("Attempted to
// remove disk file system under /run/systemd/nspawn/propagate"): a tmpfs goes there once.
void mount_nspawn_tmpfs() {
  const FileLock lock(cache_dir() / "nspawn-mount.lock");
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, devices, root, mount_point;
    fields >> id >> parent >> devices >> root >> mount_point;
    if (mount_point == "/run/systemd/nspawn") return;
  }
  fs::create_directories("/run/systemd/nspawn");
  const std::vector<std::string> argv = {"mount", "-t", "tmpfs", "tmpfs", "/run/systemd/nspawn"};
  const CommandResult run = run_command(argv);
  if (run.exit_code != 0) throw std::runtime_error(run.describe(argv));
}

// The parent process id in /proc/PID/stat (the field after the command name, which may hold
// spaces and parentheses).
std::optional<pid_t> parent_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t end = text.rfind(')');
  if (end == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(end + 1));
  std::string state;
  pid_t ppid = 0;
  if (!(rest >> state >> ppid)) return std::nullopt;
  return ppid;
}

// The container's PID 1: the child of systemd-nspawn that runs systemd.
std::optional<pid_t> find_leader(pid_t nspawn) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (parent_of(pid) != nspawn) continue;
    std::error_code error;
    const fs::path exe = fs::read_symlink(entry.path() / "exe", error);
    if (!error && exe.filename() == "systemd") return pid;
  }
  return std::nullopt;
}

}  // namespace

const ContainerTree& bookworm_tree() {
  static std::once_flag once;
  static ContainerTree tree;
  std::call_once(once, [] { tree = make_tree(); });
  return tree;
}

void require_bookworm_tree() {
  const ContainerTree& tree = bookworm_tree();
  if (tree.state == ContainerTreeState::unavailable)
    GTEST_SKIP() << "no Debian 12 container here: " << tree.message;
  ASSERT_EQ(tree.state, ContainerTreeState::ready)
      << "making the Debian 12 tree failed: " << tree.message;
}

SystemdContainer::SystemdContainer(const fs::path& tree, seconds boot_timeout) {
  const auto started = Clock::now();
  mount_nspawn_tmpfs();
  const std::string machine = "profcollect-test-" + std::to_string(::getpid()) + "-" +
                              std::to_string(Clock::now().time_since_epoch().count() % 100000);
  // Without every capability and these system calls, perf_event_open fails with EPERM inside.
  const std::vector<std::string> argv = {"systemd-nspawn",
                                         "-q",
                                         "-D",
                                         tree.string(),
                                         "--volatile=overlay",
                                         "--boot",
                                         "--console=pipe",
                                         "--register=no",
                                         "--keep-unit",
                                         "--capability=all",
                                         "--system-call-filter=perf_event_open bpf @privileged",
                                         "-M",
                                         machine};
  const fs::path console = log_dir_ / "console.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, console.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int spawned =
      ::posix_spawnp(&nspawn_, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw std::runtime_error("cannot start systemd-nspawn: " + std::string(strerror(spawned)));

  auto fail = [&](const std::string& why) {
    const std::string message = why + "\n" + diagnostics();
    power_off();
    throw std::runtime_error(message);
  };
  const auto deadline = Clock::now() + boot_timeout;
  std::string last_state;
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(nspawn_, &status, WNOHANG) == nspawn_) {
      nspawn_ = -1;
      fail("systemd-nspawn exited during the boot (status " + std::to_string(status) + ")");
    }
    if (leader_ < 0) {
      if (auto leader = find_leader(nspawn_)) leader_ = *leader;
    }
    if (leader_ > 0) {
      const CommandResult state = run({"systemctl", "is-system-running"}, seconds(30));
      last_state = state.out;
      if (last_state.starts_with("running") || last_state.starts_with("degraded")) {
        booted_in_ = std::chrono::duration_cast<milliseconds>(Clock::now() - started);
        return;
      }
    }
    std::this_thread::sleep_for(milliseconds(250));
  }
  fail("the container did not finish booting within " + std::to_string(boot_timeout.count()) +
       " s (systemctl is-system-running: " + (last_state.empty() ? "no answer" : last_state) + ")");
}

SystemdContainer::~SystemdContainer() { power_off(); }

void SystemdContainer::power_off() {
  if (nspawn_ < 0) return;
  if (leader_ > 0) run({"systemctl", "poweroff"}, seconds(30));
  const auto deadline = Clock::now() + kPowerOffTimeout;
  int status = 0;
  while (Clock::now() < deadline) {
    if (::waitpid(nspawn_, &status, WNOHANG) == nspawn_) {
      nspawn_ = -1;
      return;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  // Killing the container's PID 1 ends every process of its PID namespace; nspawn then exits.
  if (leader_ > 0) ::kill(leader_, SIGKILL);
  ::kill(nspawn_, SIGKILL);
  ::waitpid(nspawn_, &status, 0);
  nspawn_ = -1;
}

fs::path SystemdContainer::root() const { return "/proc/" + std::to_string(leader_) + "/root"; }

CommandResult SystemdContainer::run(const std::vector<std::string>& argv, seconds timeout) const {
  std::vector<std::string> full = {"nsenter", "-t", std::to_string(leader_), "-a"};
  full.insert(full.end(), argv.begin(), argv.end());
  return run_command(full, {.cwd = {}, .timeout = timeout});
}

void SystemdContainer::install_build(const fs::path& build_dir) const {
  const std::vector<std::string> install = {"env",       "DESTDIR=" + root().string(), "cmake",
                                            "--install", build_dir.string(),           "--prefix",
                                            "/usr"};
  const CommandResult installed = run_command(install);
  if (installed.exit_code != 0) throw std::runtime_error(installed.describe(install));
  for (const std::vector<std::string>& step :
       {std::vector<std::string>{"systemd-sysusers"}, {"systemctl", "daemon-reload"}}) {
    const CommandResult done = run(step);
    if (done.exit_code != 0) throw std::runtime_error("in the container: " + done.describe(step));
  }
}

std::string SystemdContainer::diagnostics() const {
  std::string text =
      "--- container console (systemd-nspawn) ---\n" + tail(read_file(log_dir_ / "console.log"));
  if (leader_ > 0) {
    const CommandResult journal = run({"journalctl", "-b", "--no-pager", "-n", "150"}, seconds(30));
    text += "\n--- journal of the container ---\n" + tail(journal.out + journal.err, 12000);
  }
  return text;
}

}  // namespace profcollect::test
