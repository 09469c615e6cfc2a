#include "collector/cli/kernel_command.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "collector/cli/cli_error.h"
#include "collector/cli/cli_spelling.h"
#include "collector/cli/stderr_logger.h"
#include "collector/cli/number_options.h"
#include "collector/kernel/kernel_collection.h"
#include "collector/session/session_driver.h"

namespace profcollect {

int run_kernel(const KernelOptions& o) {
  if (!(o.duration > 0)) throw CliError("--duration is required (seconds of kernel profile)", 2);
  if (o.frequency && o.period) throw CliError("-F and -c exclude each other", 2);
  KernelCollectionSettings s;
  s.image.vmlinux = o.vmlinux;
  if (!o.notes_path.empty()) s.image.notes_path = o.notes_path;
  s.modules_dir = o.modules_dir;
  s.output_dir = o.output_dir;
  if (!o.formats.empty()) {
    try {
      s.formats = parse_format_list(o.formats, /*kernel=*/true);
    } catch (const FormatListError& e) {
      throw CliError(in_cli_terms(e.what()), 2);
    }
  }
  s.event.frequency_hz = o.frequency;
  s.event.period = o.period;
  s.mmap_pages = o.mmap_pages;
  s.debug_dirs = o.debug_dirs;

  SessionDriver driver(
      {SIGINT, SIGTERM});  // before the collection's threads: it blocks the signals
  StderrLogger logger(o.quiet);
  KernelCollection collection(std::move(s), logger);
  const bool show_progress = !o.quiet && ::isatty(STDERR_FILENO);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(o.duration * 1000));
  auto show_time_left = [&] {
    const auto left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    std::fprintf(stderr, "\rprofcollect: kernel profile, %.0f s left  ",
                 std::max(0.0, std::ceil(left)));
    std::fflush(stderr);
  };

  collection.start();
  logger.note("collecting a kernel profile of every CPU for " + format_seconds(o.duration) +
              " into " + o.output_dir);
  driver.watch(collection.descriptors(), [&] { collection.drain(); });
  // Every 100 ms too: system-wide buffers fill fast.
  driver.every(std::chrono::milliseconds(100), [&] { collection.drain(); });
  if (show_progress) {
    show_time_left();
    driver.every(std::chrono::seconds(1), show_time_left);
  }
  driver.at(deadline, [&] { driver.stop(); });
  driver.on_signal([&](int) { driver.stop(); });
  driver.run();
  if (show_progress) std::fputs("\r\033[K", stderr);

  const KernelCollectionResult r = collection.finish();
  if (!o.quiet) {
    std::fprintf(stderr, "profcollect: %llu kernel samples (%llu in modules), event %s\n",
                 static_cast<unsigned long long>(r.samples),
                 static_cast<unsigned long long>(r.module_samples),
                 collection.event().name.c_str());
    if (r.symbolized) {
      std::fprintf(stderr, "profcollect: kernel profile in %s\n", r.profile_dir.c_str());
    } else {
      // The command to finish the profile is on a line of its own, to be copied whole.
      std::fprintf(
          stderr,
          "profcollect: kernel profile in %s (no vmlinux with debug info):\n"
          "  functions.txt: samples per function from /proc/kallsyms\n"
          "  autofdo.unsym: llvm-profgen's unsymbolized profile; where the vmlinux is, finish it "
          "with\n"
          "    llvm-profgen --kernel --binary vmlinux --unsymbolized-profile %s/autofdo.unsym "
          "--leading-ip-only --output kernel.afdo\n",
          r.profile_dir.c_str(), r.profile_dir.c_str());
      for (size_t i = 0; i < r.top.size() && i < 10; ++i) {
        std::fprintf(stderr, "  %6.2f%%  %s%s\n", 100.0 * r.top[i].share, r.top[i].name.c_str(),
                     r.top[i].module.empty() ? "" : (" [" + r.top[i].module + "]").c_str());
      }
    }
  }
  return r.ok ? 0 : 1;
}

}  // namespace profcollect
