#include "collector/service/peer_credentials.h"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace profcollect {

namespace {

// The supplementary groups of a running process, from the "Groups:" line of /proc/PID/status.
std::optional<std::vector<gid_t>> process_groups(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  if (!status) return std::nullopt;
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Groups:", 0) != 0) continue;
    std::istringstream fields(line.substr(7));
    std::vector<gid_t> groups;
    unsigned long g = 0;
    while (fields >> g) groups.push_back(static_cast<gid_t>(g));
    return groups;
  }
  return std::nullopt;
}

// The groups the user database gives `uid`, when the process is gone or its status unreadable.
std::vector<gid_t> user_groups(uid_t uid, gid_t primary) {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || !found) return {};
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  if (getgrouplist(pw.pw_name, primary, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n));
    if (getgrouplist(pw.pw_name, primary, groups.data(), &n) < 0) return {};
  }
  groups.resize(static_cast<size_t>(n));
  return groups;
}

}  // namespace

std::optional<PeerCredentials> peer_credentials(int socket_fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred)
    return std::nullopt;
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

std::string refuse_peer(const PeerCredentials& peer, std::optional<gid_t> allowed_gid) {
  if (peer.uid == 0) return "";
  const std::string who = "uid " + std::to_string(peer.uid);
  if (!allowed_gid) return who + " is not root (no allowed_group is configured)";
  if (peer.gid == *allowed_gid) return "";
  const std::optional<std::vector<gid_t>> groups = process_groups(peer.pid);
  for (gid_t g : groups ? *groups : user_groups(peer.uid, peer.gid)) {
    if (g == *allowed_gid) return "";
  }
  return who + " is neither root nor a member of the allowed group";
}

}  // namespace profcollect
