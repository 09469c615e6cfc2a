// The daemon's control socket: a unix stream socket speaking JSON lines. Each line a peer sends
// is one request (a JSON object), answered by one line. Only root and members of the allowed
// group are served: anyone else gets one error line and the connection is closed. A line that
// is not JSON gets an error reply and the connection goes on; a line longer than
// kMaxRequestBytes gets an error reply and the connection is closed (what follows cannot be
// told apart from the rest of it). Nothing a peer sends stops the server.
#pragma once

#include <sys/types.h>

#include <utility>  // boost 1.74 asio uses std::exchange without including it

#include <boost/asio.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace profcollect {

class SessionLogger;

// Creates the missing directories above the socket `path` (0755). Throws std::runtime_error.
void create_socket_directories(const std::string& path);

class ControlServer {
 public:
  static constexpr size_t kMaxRequestBytes = 64 * 1024;
  // Sends the reply to one request (once); the connection reads its next request after it.
  using Reply = std::function<void(nlohmann::ordered_json reply)>;
  // Answers one request, at once or later (a kernel profile answers when it is written); a
  // reply with an "error" member says it failed.
  using Handler = std::function<void(const nlohmann::json& request, Reply reply)>;

  // Creates the socket's missing parent directories (0755), replaces a stale socket left at
  // `path` (anything else there is refused, and so is a socket a process listens on), binds and
  // listens; the socket is 0660, owned by
  // `allowed_gid` when set. Throws std::runtime_error naming the path and the reason.
  ControlServer(boost::asio::io_context& io, std::string path, std::optional<gid_t> allowed_gid,
                Handler handler, SessionLogger& logger);
  ~ControlServer();  // closes the socket and removes its file (if it is still the one it made)

  const std::string& path() const { return path_; }

 private:
  class Connection;
  void accept();

  std::string path_;
  std::optional<gid_t> allowed_gid_;
  std::shared_ptr<Handler> handler_;  // shared with the connections, which may outlive the server
  SessionLogger& logger_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  boost::asio::steady_timer retry_;
  bool accept_failing_ = false;
  dev_t bound_dev_ = 0;  // the socket file this server bound
  ino_t bound_ino_ = 0;
};

}  // namespace profcollect
