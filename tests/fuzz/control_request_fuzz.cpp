// Fuzz target: what a peer sends the daemon's control socket (collector/service/control_server.h): bytes
// cut into lines, each line a JSON request. The input is written, as one client would, to a
// real ControlServer listening in the scratch directory; its handler answers as the daemon's
// does -- at once, later from the event loop, or by throwing -- after reading "cmd" and
// "duration". Every reply must be one line holding a JSON object, and the replies must be
// exactly one per line sent (a line of more than kMaxRequestBytes: one error reply, then the
// server hangs up). Nothing a peer sends may stop the server.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "collector/session/collection_session.h"
#include "collector/service/control_server.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace profcollect;
namespace asio = boost::asio;

class QuietLogger : public SessionLogger {
 public:
  void note(const std::string&) override {}
  void warning(const std::string&) override {}
  void error(const std::string&) override {}
};

// The daemon's way with a request (collector/service/daemon.cpp: Daemon::handle_async), without a daemon.
void answer(asio::io_context& io, const nlohmann::json& request, ControlServer::Reply reply) {
  const auto cmd = request.find("cmd");
  if (cmd == request.end() || !cmd->is_string()) {
    reply({{"error", "a request names its command"}});
    return;
  }
  const std::string name = cmd->get<std::string>();
  if (name == "throw") throw std::runtime_error("the handler failed");
  if (name == "kernel") {
    const auto d = request.find("duration");
    if (d == request.end() || !d->is_number() ||
        !(d->get<double>() >= 1 && d->get<double>() <= 3600)) {
      reply({{"error", "kernel needs \"duration\""}});
      return;
    }
    // Answered later, from the event loop, as a kernel profile is.
    asio::post(io, [reply, seconds = d->get<double>()] {
      reply({{"ok", true}, {"seconds", seconds}});
    });
    return;
  }
  nlohmann::ordered_json j;
  j["ok"] = true;
  j["cmd"] = name;
  reply(std::move(j));
}

struct Server {
  asio::io_context io;
  QuietLogger logger;
  std::string path = fuzz::ScratchDirectory::get().file("ctl");
  // The fuzzer's own group may talk to it, also when the fuzzer does not run as root.
  ControlServer server{io, path, ::getegid(),
                       [this](const nlohmann::json& request, ControlServer::Reply reply) {
                         answer(io, request, std::move(reply));
                       },
                       logger};
};

Server& server() {
  static Server* s = new Server;  // never destroyed: libFuzzer may end the process at any time
  return *s;
}

// The replies the server owes for `input`, and whether it hangs up after the last of them.
size_t replies_owed(std::string_view input) {
  constexpr size_t kBuffer = ControlServer::kMaxRequestBytes + 1;  // a line and its newline
  size_t owed = 0;
  for (;;) {
    const size_t nl = input.find('\n');
    if (nl == std::string_view::npos) return owed + (input.size() >= kBuffer ? 1 : 0);
    if (nl + 1 > kBuffer) return owed + 1;  // too long: an error reply, then the end
    ++owed;
    input.remove_prefix(nl + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Server& s = server();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) std::abort();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, s.path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) std::abort();

  // Writes and reads by turns with the server's event loop until the server hangs up, which it
  // does once it meets the end of what was sent (or a line too long). A server that never does
  // spins here until libFuzzer's -timeout calls it a finding.
  size_t sent = 0;
  bool shut = false;
  std::string received;
  for (;;) {
    if (sent < size) {
      const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
      if (n > 0)
        sent += static_cast<size_t>(n);
      else if (errno == EPIPE || errno == ECONNRESET)
        sent = size;  // hung up after a long line
      else if (errno != EAGAIN)
        std::abort();
    }
    if (sent == size && !shut) {
      ::shutdown(fd, SHUT_WR);
      shut = true;
    }
    s.io.restart();
    s.io.poll();
    char buffer[65536];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n > 0)
      received.append(buffer, static_cast<size_t>(n));
    else if (n == 0 || errno == ECONNRESET)
      break;  // the server closed the connection
    else if (errno != EAGAIN)
      std::abort();
  }
  ::close(fd);
  s.io.restart();
  s.io.poll();  // the server's end of the connection goes

  const std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t replies = 0;
  std::string_view rest = received;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) __builtin_trap();  // a reply cut short
    const nlohmann::json reply = nlohmann::json::parse(rest.substr(0, nl), nullptr, false);
    if (reply.is_discarded() || !reply.is_object()) __builtin_trap();
    ++replies;
    rest.remove_prefix(nl + 1);
  }
  if (replies != replies_owed(input)) __builtin_trap();
  return 0;
}
