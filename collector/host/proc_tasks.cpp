#include "collector/host/proc_tasks.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "collector/host/proc_files.h"

namespace profcollect {

namespace {

// The numeric entries of a /proc directory, ascending.
std::vector<pid_t> numeric_entries(const std::string& dir) {
  std::vector<pid_t> ids;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return ids;
  while (const dirent* e = ::readdir(d)) {
    pid_t id = 0;
    const char* end = e->d_name + std::strlen(e->d_name);
    auto [p, ec] = std::from_chars(e->d_name, end, id);
    if (ec == std::errc() && p == end && id > 0) ids.push_back(id);
  }
  ::closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

std::vector<pid_t> list_threads(pid_t pid) {
  std::vector<pid_t> tids = numeric_entries("/proc/" + std::to_string(pid) + "/task");
  // The process's own id first: its events are opened first, so threads it starts meanwhile
  // inherit them.
  auto self = std::find(tids.begin(), tids.end(), pid);
  if (self != tids.end()) std::rotate(tids.begin(), self, self + 1);
  return tids;
}

std::vector<pid_t> list_processes() { return numeric_entries("/proc"); }

std::optional<std::string> read_thread_comm(pid_t pid, pid_t tid) {
  std::string comm;
  if (!read_first_line("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm",
                       comm))
    return std::nullopt;
  return comm;
}

std::optional<pid_t> thread_group_of(pid_t tid) {
  std::string status;
  if (!read_whole_file("/proc/" + std::to_string(tid) + "/status", status)) return std::nullopt;
  const auto at = status.find("\nTgid:");
  if (at == std::string::npos) return std::nullopt;
  const char* p = status.c_str() + at + 6;
  while (*p == ' ' || *p == '\t') ++p;
  pid_t tgid = 0;
  auto [end, ec] = std::from_chars(p, status.c_str() + status.size(), tgid);
  if (ec != std::errc() || tgid <= 0) return std::nullopt;
  return tgid;
}

std::optional<uid_t> process_owner(pid_t pid) {
  struct stat st {};
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return std::nullopt;
  return st.st_uid;
}

}  // namespace profcollect
