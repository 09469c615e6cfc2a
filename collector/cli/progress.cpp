#include "collector/cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace profcollect {

namespace {
bool g_drawn = false;
}

std::function<void(uint64_t, uint64_t)> make_progress_reporter(const std::string& what,
                                                               bool quiet) {
  if (quiet || !isatty(STDERR_FILENO)) return {};
  return [what](uint64_t done, uint64_t total) {
    if (total > 0) {
      std::fprintf(stderr, "\r%s: %3.0f%% (%llu MiB)", what.c_str(), 100.0 * done / total,
                   static_cast<unsigned long long>(done >> 20));
    } else {
      std::fprintf(stderr, "\r%s: %llu MiB", what.c_str(),
                   static_cast<unsigned long long>(done >> 20));
    }
    g_drawn = true;
  };
}

void finish_progress() {
  if (g_drawn) std::fprintf(stderr, "\r\033[K");
  g_drawn = false;
}

}  // namespace profcollect
