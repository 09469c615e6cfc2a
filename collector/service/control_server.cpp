#include "collector/service/control_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "collector/session/collection_session.h"
#include "collector/service/peer_credentials.h"

namespace profcollect {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;

namespace {

std::string error_line(const std::string& why) {
  nlohmann::ordered_json j;
  j["error"] = why;
  return j.dump() + "\n";
}

// Whether a process accepts connections on the unix socket at `path`.
bool someone_listens(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  const bool connected =
      ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 || errno == EAGAIN;
  ::close(fd);
  return connected;
}

}  // namespace

void create_socket_directories(const std::string& path) {
  const std::filesystem::path socket_path(path);
  std::filesystem::path dir;
  for (const auto& part : socket_path.parent_path()) {
    dir /= part;
    if (::mkdir(dir.c_str(), 0755) == 0) {
      ::chmod(dir.c_str(), 0755);  // the umask does not narrow it
    } else if (errno != EEXIST) {
      throw std::runtime_error("socket " + socket_path.string() + ": cannot create " +
                               dir.string() + ": " + std::strerror(errno));
    }
  }
}

class ControlServer::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(local::socket socket, std::shared_ptr<Handler> handler)
      : socket_(std::move(socket)), handler_(std::move(handler)), input_(kMaxRequestBytes + 1) {}

  void refuse(const std::string& why) {
    auto self = shared_from_this();
    reply_ = error_line("permission denied: " + why);
    asio::async_write(socket_, asio::buffer(reply_),
                      [self](const boost::system::error_code&, size_t) {
                        boost::system::error_code ignored;
                        self->socket_.close(ignored);
                      });
  }

  void read() {
    auto self = shared_from_this();
    asio::async_read_until(
        socket_, input_, '\n', [self](const boost::system::error_code& ec, size_t n) {
          if (ec == asio::error::not_found) {
            self->answer(
                error_line("request longer than " + std::to_string(kMaxRequestBytes) + " bytes"),
                true);
          } else if (!ec) {
            std::string line(asio::buffers_begin(self->input_.data()),
                             asio::buffers_begin(self->input_.data()) + n - 1);
            self->input_.consume(n);
            self->respond(line);
          }
          // Any other error: the peer went away.
        });
  }

 private:
  void respond(const std::string& line) {
    const nlohmann::json request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (request.is_discarded() || !request.is_object()) {
      answer(error_line("a request is one JSON object per line"), false);
      return;
    }
    // The reply may come later (from a timer of the same io_context): the connection waits for
    // it before reading on, and stays alive through the callback.
    auto self = shared_from_this();
    auto replied = std::make_shared<bool>(false);
    try {
      (*handler_)(request, [self, replied](nlohmann::ordered_json reply) {
        if (*replied) return;
        *replied = true;
        self->answer(reply.dump() + "\n", false);
      });
    } catch (const std::exception& e) {
      if (!*replied) {
        *replied = true;
        answer(error_line(e.what()), false);
      }
    }
  }

  void answer(std::string reply, bool close_after) {
    auto self = shared_from_this();
    reply_ = std::move(reply);
    asio::async_write(socket_, asio::buffer(reply_),
                      [self, close_after](const boost::system::error_code& ec, size_t) {
                        if (ec || close_after) {
                          boost::system::error_code ignored;
                          self->socket_.close(ignored);
                          return;
                        }
                        self->read();
                      });
  }

  local::socket socket_;
  std::shared_ptr<Handler> handler_;
  asio::streambuf input_;
  std::string reply_;
};

ControlServer::ControlServer(asio::io_context& io, std::string path,
                             std::optional<gid_t> allowed_gid, Handler handler,
                             SessionLogger& logger)
    : path_(std::move(path)),
      allowed_gid_(allowed_gid),
      handler_(std::make_shared<Handler>(std::move(handler))),
      logger_(logger),
      acceptor_(io),
      retry_(io) {
  create_socket_directories(path_);
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    // A socket left by a daemon that did not end cleanly is replaced; nothing else is, and
    // never one that a process still listens on.
    if (!S_ISSOCK(st.st_mode))
      throw std::runtime_error("socket " + path_ + ": exists and is not a socket");
    if (someone_listens(path_))
      throw std::runtime_error("socket " + path_ + ": another process listens on it");
    ::unlink(path_.c_str());
  }
  boost::system::error_code ec;
  acceptor_.open(local(), ec);
  // Created 0600, widened once its group is set: never reachable by others in between.
  const mode_t old_mask = ::umask(0177);
  if (!ec) acceptor_.bind(local::endpoint(path_), ec);
  ::umask(old_mask);
  struct stat bound {};
  if (!ec && ::lstat(path_.c_str(), &bound) == 0) {
    bound_dev_ = bound.st_dev;
    bound_ino_ = bound.st_ino;
  }
  // The socket is born with the daemon's group: when that is allowed_group (the service's own
  // group under the unit, whose system call filter denies chown), there is nothing to change.
  struct stat made {};
  if (!ec && allowed_gid_ && (::stat(path_.c_str(), &made) != 0 || made.st_gid != *allowed_gid_) &&
      ::chown(path_.c_str(), static_cast<uid_t>(-1), *allowed_gid_) != 0) {
    const int error = errno;
    ::unlink(path_.c_str());
    throw std::runtime_error(
        "socket " + path_ + ": cannot give it to allowed_group (gid " +
        std::to_string(*allowed_gid_) + "): " + std::strerror(error) +
        (error == EPERM ? " (without CAP_CHOWN only the daemon's own group can be given)" : ""));
  }
  if (!ec && ::chmod(path_.c_str(), 0660) != 0) ec.assign(errno, boost::system::system_category());
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("socket " + path_ + ": " + ec.message());
  accept();
}

ControlServer::~ControlServer() {
  boost::system::error_code ignored;
  retry_.cancel();
  acceptor_.close(ignored);
  // Only the socket this server made: another one at the path is someone else's.
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == bound_dev_ &&
      st.st_ino == bound_ino_)
    ::unlink(path_.c_str());
}

void ControlServer::accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, local::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      const std::optional<PeerCredentials> peer = peer_credentials(socket.native_handle());
      const std::string refused = peer ? refuse_peer(*peer, allowed_gid_)
                                       : std::string("the peer's credentials are unknown");
      auto connection = std::make_shared<Connection>(std::move(socket), handler_);
      if (refused.empty()) {
        connection->read();
      } else {
        logger_.warning("control socket: refused a request: " + refused);
        connection->refuse(refused);
      }
    }
    if (ec) {
      // Out of descriptors, or the like: say it once and try again a moment later rather than
      // spinning on the error.
      if (!accept_failing_) logger_.warning("control socket: accept failed: " + ec.message());
      accept_failing_ = true;
      retry_.expires_after(std::chrono::milliseconds(200));
      retry_.async_wait([this](const boost::system::error_code& e) {
        if (!e) accept();
      });
      return;
    }
    accept_failing_ = false;
    accept();
  });
}

}  // namespace profcollect
