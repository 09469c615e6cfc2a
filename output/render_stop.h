// A render that can be stopped part way. Rendering a binary with much debug info takes seconds
// (every sampled address symbolized through its DWARF); a flush with a deadline (the daemon's
// final flush after SIGTERM, or a periodic flush a SIGTERM interrupts) asks the renderer to give
// up instead of finishing. The renderer calls check() every so often; once `requested` says so
// it throws RenderStopped, and the binary keeps what its last flush wrote.
#pragma once

#include <functional>
#include <stdexcept>

namespace profcollect {

class RenderStopped : public std::runtime_error {
 public:
  RenderStopped() : std::runtime_error("rendering stopped: the flush's time is up") {}
};

// How many instructions a loop symbolizes between two checks by default (a few milliseconds).
inline constexpr unsigned kRenderStopStride = 1024;

struct RenderStop {
  std::function<bool()> requested;
  unsigned stride = kRenderStopStride;  // instructions between two checks, at least 1
  void check() const {
    if (requested && requested()) throw RenderStopped();
  }
};

}  // namespace profcollect
