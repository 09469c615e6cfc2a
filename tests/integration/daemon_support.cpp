#include "tests/integration/daemon_support.h"

#include "tests/integration/cpu_time.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace profcollect::test {

namespace fs = std::filesystem;

NotifyListener::NotifyListener(const fs::path& path) : path_(path) {
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (fd_ < 0 || path.string().size() >= sizeof addr.sun_path)
    throw std::runtime_error("notify socket");
  std::strcpy(addr.sun_path, path.c_str());
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("bind " + path.string() + ": " + std::strerror(errno));
  if (::pipe2(stop_, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  receiver_ = std::thread([this] { receive(); });
}

NotifyListener::~NotifyListener() {
  const char end = 0;
  [[maybe_unused]] const ssize_t written = ::write(stop_[1], &end, 1);
  receiver_.join();
  ::close(stop_[0]);
  ::close(stop_[1]);
  if (fd_ >= 0) ::close(fd_);
  ::unlink(path_.c_str());
}

void NotifyListener::receive() {
  for (;;) {
    // While paused only the stop pipe is watched; a short timeout notices the pause and its end.
    pollfd p[2] = {{stop_[0], POLLIN, 0}, {fd_, POLLIN, 0}};
    if (::poll(p, paused_ ? 1 : 2, 10) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[0].revents) return;
    if (paused_ || !p[1].revents) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) continue;
    std::lock_guard lock(mutex_);
    messages_.emplace_back(buf, static_cast<size_t>(n));
    arrived_.notify_all();
  }
}

bool NotifyListener::holds(const std::string& message, const std::string& line) const {
  std::istringstream lines(message);
  std::string l;
  while (std::getline(lines, l)) {
    if (l.rfind(line, 0) == 0) return true;
  }
  return false;
}

std::optional<std::string> NotifyListener::wait_for(const std::string& line,
                                                    std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mutex_);
  for (;;) {
    for (; seen_ < messages_.size(); ++seen_) {
      if (holds(messages_[seen_], line)) return messages_[seen_++];
    }
    if (arrived_.wait_until(lock, deadline) == std::cv_status::timeout && seen_ == messages_.size())
      return std::nullopt;
  }
}

size_t NotifyListener::count(const std::string& line) const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& m : messages_) n += holds(m, line);
  return n;
}

std::vector<std::string> NotifyListener::messages() const {
  std::lock_guard lock(mutex_);
  return messages_;
}

std::string NotifyListener::describe() const {
  std::lock_guard lock(mutex_);
  std::string s = "notifications:";
  for (const auto& m : messages_) s += "\n  [" + m + "]";
  return s;
}

BackgroundProcess start_daemon(const fs::path& config, const NotifyListener& notify,
                               std::optional<std::chrono::microseconds> watchdog) {
  // The child inherits the environment at fork.
  ::setenv("NOTIFY_SOCKET", notify.path().c_str(), 1);
  if (watchdog) ::setenv("WATCHDOG_USEC", std::to_string(watchdog->count()).c_str(), 1);
  BackgroundProcess p = start_profcollect({"daemon", "--config", config.string()});
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  return p;
}

CtlRun run_ctl(const fs::path& socket, const std::vector<std::string>& args,
               std::optional<RunAs> run_as, bool json) {
  std::vector<std::string> argv = {profcollect_exe().string(), "ctl", "--socket", socket.string()};
  if (json) argv.push_back("--json");
  argv.insert(argv.end(), args.begin(), args.end());
  BackgroundProcess p =
      BackgroundProcess::start(argv, {.cwd = "/", .own_process_group = false, .run_as = run_as});
  CtlRun r;
  const auto status = p.wait(kPatience);
  r.exit_code = status ? *status : -1;
  r.out = p.out();
  r.err = p.err();
  r.reply = nlohmann::json::parse(r.out, nullptr, false);
  return r;
}

FixtureSet& spool_fixture_set() {
  static FixtureSet set({.name = "spool",
                         .script = "make_spool_fixtures.sh",
                         .source_folder = "src",
                         .is_source = [](std::string_view file) { return file == "spool_hot.c"; },
                         .timeout = std::chrono::seconds(300)});
  return set;
}
namespace {
[[maybe_unused]] const bool spool_set_registered = register_fixture_set(&spool_fixture_set);
}  // namespace

void SpoolFixtureTest::SetUp() {
  LiveFixtureTest::SetUp();
  if (IsSkipped() || HasFatalFailure()) return;
  spool_fixture_set().require_ready();
}

fs::path spool_fixture(const std::string& name) {
  return fs::weakly_canonical(spool_fixture_set().status().dir / name);
}

std::string exact_path_pattern(const fs::path& path) {
  std::string re = "^";
  for (char c : path.string()) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos)
      re += "\\\\";  // TOML and regex escapes
    re += c;
  }
  return "\"" + re + "$\"";
}

void write_text(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".new";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

}  // namespace profcollect::test
