#include "collector/cli/ctl_command.h"

#include <utility>  // boost 1.74 asio uses std::exchange without including it

#include <boost/asio.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "collector/cli/cli_error.h"

namespace profcollect {

namespace asio = boost::asio;

int run_ctl(const CtlOptions& o) {
  nlohmann::ordered_json request;
  request["cmd"] = o.command;
  if (o.command == "kernel") {
    if (!o.duration) throw CliError("kernel needs --duration SECONDS", 2);
    request["duration"] = *o.duration;
  } else if (o.duration) {
    throw CliError("--duration goes with kernel only", 2);
  }
  asio::io_context io;
  asio::local::stream_protocol::socket socket(io);
  boost::system::error_code ec;
  socket.connect(asio::local::stream_protocol::endpoint(o.socket), ec);
  if (ec) throw CliError(o.socket + ": " + ec.message() + " (is the daemon running?)");
  const std::string line = request.dump() + "\n";
  asio::write(socket, asio::buffer(line), ec);
  // A refused peer may be answered and closed before its request is read: the reply still counts.
  asio::streambuf reply;
  const size_t n = asio::read_until(socket, reply, '\n', ec);
  if (n == 0) throw CliError(o.socket + ": no reply" + (ec ? ": " + ec.message() : std::string()));
  std::string text(asio::buffers_begin(reply.data()), asio::buffers_begin(reply.data()) + n - 1);
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw CliError(o.socket + ": a reply that is not JSON: " + text);
  std::printf("%s\n", j.dump(2).c_str());
  if (j.contains("error")) {
    const std::string why = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
    std::fprintf(stderr, "profcollect: error: %s\n", why.c_str());
    return 1;
  }
  return 0;
}

}  // namespace profcollect
