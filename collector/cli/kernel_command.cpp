#include "collector/cli/kernel_command.h"

#include <signal.h>
#include <unistd.h>

#include <utility>  // boost 1.74 asio uses std::exchange without including it

#include <boost/asio.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "collector/cli/cli_error.h"
#include "collector/cli/cli_spelling.h"
#include "collector/cli/stderr_logger.h"
#include "collector/cli/number_options.h"
#include "collector/kernel_collection.h"

namespace profcollect {

namespace {

namespace asio = boost::asio;

std::vector<ProfileFormat> parse_kernel_formats(const std::string& list) {
  std::vector<ProfileFormat> out;
  std::stringstream ss(list);
  for (std::string f; std::getline(ss, f, ',');) {
    if (f == "autofdo") out.push_back(ProfileFormat::Autofdo);
    else if (f == "unsymbolized") out.push_back(ProfileFormat::Unsymbolized);
    else if (f == "bolt") out.push_back(ProfileFormat::Bolt);
    else throw CliError("--format: " + f + " is not one of autofdo, unsymbolized, bolt", 2);
  }
  if (out.empty()) throw CliError("--format: name at least one of autofdo, unsymbolized, bolt", 2);
  return out;
}

}  // namespace

int run_kernel(const KernelOptions& o) {
  if (!(o.duration > 0)) throw CliError("--duration is required (seconds of kernel profile)", 2);
  if (o.frequency && o.period) throw CliError("-F and -c exclude each other", 2);
  KernelCollectionSettings s;
  s.image.vmlinux = o.vmlinux;
  if (!o.notes_path.empty()) s.image.notes_path = o.notes_path;
  s.modules_dir = o.modules_dir;
  s.output_dir = o.output_dir;
  if (!o.formats.empty()) s.formats = parse_kernel_formats(o.formats);
  s.event.frequency_hz = o.frequency;
  s.event.period = o.period;
  s.mmap_pages = o.mmap_pages;
  s.debug_dirs = o.debug_dirs;

  StderrLogger logger(o.quiet);
  KernelCollection collection(std::move(s), logger);
  asio::io_context io;
  std::vector<std::unique_ptr<asio::posix::stream_descriptor>> fds;
  asio::steady_timer poll(io), tick(io), end(io);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  bool stopping = false;
  const bool show_progress = !o.quiet && ::isatty(STDERR_FILENO);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.duration * 1000));

  auto stop = [&] {
    if (stopping) return;
    stopping = true;
    poll.cancel();
    tick.cancel();
    end.cancel();
    signals.cancel();
    for (auto& d : fds) d->cancel();
  };
  std::function<void()> arm_poll = [&] {
    // Every 100 ms and whenever a buffer wakes us: system-wide buffers fill fast.
    poll.expires_after(std::chrono::milliseconds(100));
    poll.async_wait([&](const boost::system::error_code& ec) {
      if (ec || stopping) return;
      collection.drain();
      arm_poll();
    });
  };
  std::function<void()> arm_tick = [&] {
    const auto left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    std::fprintf(stderr, "\rprofcollect: kernel profile, %.0f s left  ", std::max(0.0, std::ceil(left)));
    std::fflush(stderr);
    tick.expires_after(std::chrono::seconds(1));
    tick.async_wait([&](const boost::system::error_code& ec) {
      if (!ec && !stopping) arm_tick();
    });
  };
  std::function<void(size_t)> arm_fd = [&](size_t i) {
    fds[i]->async_wait(asio::posix::stream_descriptor::wait_read, [&, i](const boost::system::error_code& ec) {
      if (ec || stopping) return;
      collection.drain();
      auto t = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(10));
      t->async_wait([&, i, t](const boost::system::error_code& e) {
        if (!e && !stopping) arm_fd(i);
      });
    });
  };

  collection.start();
  logger.note("collecting a kernel profile of every CPU for " + format_seconds(o.duration) + " into " + o.output_dir);
  for (int fd : collection.descriptors()) {
    fds.push_back(std::make_unique<asio::posix::stream_descriptor>(io, fd));
    arm_fd(fds.size() - 1);
  }
  arm_poll();
  if (show_progress) arm_tick();
  end.expires_at(deadline);
  end.async_wait([&](const boost::system::error_code& ec) {
    if (!ec) stop();
  });
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) stop();
  });
  io.run();
  for (auto& d : fds) d->release();  // the session's events own them
  if (show_progress) std::fputs("\r\033[K", stderr);

  const KernelCollectionResult r = collection.finish();
  if (!o.quiet) {
    std::fprintf(stderr, "profcollect: %llu kernel samples (%llu in modules), event %s\n",
                 static_cast<unsigned long long>(r.samples), static_cast<unsigned long long>(r.module_samples),
                 collection.event().name.c_str());
    if (r.symbolized) {
      std::fprintf(stderr, "profcollect: kernel profile in %s\n", r.profile_dir.c_str());
    } else {
      std::fprintf(stderr,
                   "profcollect: no vmlinux with debug info: %s/autofdo.unsym is llvm-profgen's unsymbolized "
                   "profile, to finish where the vmlinux is with `llvm-profgen --kernel --binary vmlinux "
                   "--unsymbolized-profile %s/autofdo.unsym --leading-ip-only --output kernel.afdo`; "
                   "%s/functions.txt has samples per function from /proc/kallsyms\n",
                   r.profile_dir.c_str(), r.profile_dir.c_str(), r.profile_dir.c_str());
      for (size_t i = 0; i < r.top.size() && i < 10; ++i) {
        std::fprintf(stderr, "  %6.2f%%  %s%s\n", 100.0 * r.top[i].share, r.top[i].name.c_str(),
                     r.top[i].module.empty() ? "" : (" [" + r.top[i].module + "]").c_str());
      }
    }
  }
  return r.ok ? 0 : 1;
}

}  // namespace profcollect
