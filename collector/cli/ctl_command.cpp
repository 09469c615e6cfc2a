#include "collector/cli/ctl_command.h"

#include <utility>  // boost 1.74 asio uses std::exchange without including it

#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "collector/cli/cli_error.h"
#include "collector/cli/ctl_summary.h"
#include "collector/cli/number_options.h"

namespace profcollect {

namespace asio = boost::asio;

namespace {

// One request and its reply line over the socket, given up after `patience`: connect, write
// and read are asynchronous on one io_context that runs no longer than that.
std::string exchange(const std::string& path, const std::string& line,
                     std::chrono::milliseconds patience) {
  asio::io_context io;
  asio::local::stream_protocol::socket socket(io);
  asio::streambuf reply;
  boost::system::error_code failure;
  size_t reply_size = 0;
  bool done = false;
  socket.async_connect(asio::local::stream_protocol::endpoint(path),
                       [&](const boost::system::error_code& ec) {
                         if (ec) {
                           failure = ec;
                           done = true;
                           return;
                         }
                         // A refused peer may be answered and closed before its request is read: the reply still
                         // counts, so the read does not wait for the write.
                         asio::async_write(socket, asio::buffer(line),
                                           [](const boost::system::error_code&, size_t) {});
                         asio::async_read_until(socket, reply, '\n',
                                                [&](const boost::system::error_code& e, size_t n) {
                                                  failure = e;
                                                  reply_size = n;
                                                  done = true;
                                                });
                       });
  io.run_for(patience);
  if (!done) {
    throw CliError(path + ": no reply within " +
                   format_seconds(std::chrono::duration<double>(patience).count()) +
                   " (--timeout): the daemon is stuck or not a profcollect daemon");
  }
  if (reply_size == 0) {
    if (failure == asio::error::not_found)
      throw CliError(path + ": the reply is not a line of JSON");
    throw CliError(path + ": " + (failure ? failure.message() : std::string("no reply")) +
                   (failure == asio::error::connection_refused ||
                            failure == boost::system::errc::no_such_file_or_directory
                        ? " (is the daemon running?)"
                        : ""));
  }
  return std::string(asio::buffers_begin(reply.data()),
                     asio::buffers_begin(reply.data()) + reply_size - 1);
}

}  // namespace

int run_ctl(const CtlOptions& o) {
  nlohmann::ordered_json request;
  request["cmd"] = o.command;
  double patience =
      o.timeout.value_or(o.command == "flush" ? kDefaultFlushTimeout : kDefaultRequestTimeout);
  if (o.command == "kernel") {
    if (!o.duration) throw CliError("kernel needs --duration SECONDS", 2);
    request["duration"] = *o.duration;
    patience += *o.duration;  // the reply comes once the profile is written
  } else if (o.duration) {
    throw CliError("--duration goes with kernel only", 2);
  }
  const std::string text =
      exchange(o.socket, request.dump() + "\n",
               std::chrono::milliseconds(static_cast<int64_t>(patience * 1000)));
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw CliError(o.socket + ": a reply that is not JSON: " + text);
  if (o.json) std::printf("%s\n", j.dump(2).c_str());
  if (j.contains("error")) {
    const std::string why =
        j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
    std::fprintf(stderr, "profcollect: error: %s\n", why.c_str());
    return 1;
  }
  if (!o.json) std::fputs(summarize_reply(o.command, j).c_str(), stdout);
  return 0;
}

}  // namespace profcollect
