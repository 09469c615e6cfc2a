#include "tests/integration/cpu_time.h"

#include <time.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace profcollect::test {

std::optional<std::chrono::nanoseconds> process_cpu_time(pid_t pid) {
  clockid_t clock;
  if (::clock_getcpuclockid(pid, &clock) != 0) return std::nullopt;
  timespec ts{};
  if (::clock_gettime(clock, &ts) != 0) return std::nullopt;
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

bool wait_for_cpu_time(pid_t pid, std::chrono::nanoseconds amount,
                       std::chrono::milliseconds timeout) {
  const std::optional<std::chrono::nanoseconds> start = process_cpu_time(pid);
  if (!start) return false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const std::optional<std::chrono::nanoseconds> now = process_cpu_time(pid);
    if (!now) return false;
    if (*now - *start >= amount) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::vector<pid_t> child_processes(pid_t pid) {
  std::vector<pid_t> children;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so start after the last ')'.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    pid_t parent = 0;
    if (rest >> state >> parent && parent == pid)
      children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

char process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return 0;
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return 0;
  return stat[close + 2];
}

std::optional<uint64_t> voluntary_context_switches(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  const std::string key = "voluntary_ctxt_switches:";
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(key)) return std::stoull(line.substr(key.size()));
  }
  return std::nullopt;
}

}  // namespace profcollect::test
