// Who is at the other end of a unix socket (SO_PEERCRED), and whether that one may talk to the
// daemon: root, or a member of the allowed group (its primary group or, as the kernel holds them
// for the peer process now, one of its supplementary groups).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace profcollect {

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// The credentials the kernel recorded for a connected unix socket; nullopt when it cannot say.
std::optional<PeerCredentials> peer_credentials(int socket_fd);

// Empty when the peer may send requests; otherwise why not. `allowed_gid` unset: root only.
std::string refuse_peer(const PeerCredentials& peer, std::optional<gid_t> allowed_gid);

}  // namespace profcollect
