// Fuzz target: a perf.data read from a pipe (`perf record -o - | profcollect convert -p -`): the
// input goes through a real pipe that stands in for standard input, so the reader meets a
// non-seekable InputFile (collector/records/buffered_input.h) and takes the pipe-mode path -- skipping
// payloads by reading, no size known in advance. The only acceptable failures are OpenError and
// SourceError.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "collector/input/perf_data_reader.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// A pipe holds up to this much once enlarged; longer inputs are cut there (the fuzzer's inputs
// are far shorter).
constexpr size_t kPipeBytes = 1 << 20;

// Puts `size` bytes into a new pipe whose write end is closed, and makes its read end standard
// input. Returns the saved standard input.
int pipe_as_stdin(const uint8_t* data, size_t size) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) std::abort();
  const int capacity = fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(kPipeBytes));
  const size_t fits = capacity > 0 ? static_cast<size_t>(capacity) : 65536;
  if (!profcollect::fuzz::write_all(fds[1], data, size < fits ? size : fits)) std::abort();
  ::close(fds[1]);
  const int saved = dup(STDIN_FILENO);
  if (saved < 0 || dup2(fds[0], STDIN_FILENO) < 0) std::abort();
  ::close(fds[0]);
  return saved;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace profcollect;
  const int saved_stdin = pipe_as_stdin(data, size);
  try {
    auto source = open_perf_data("-");
    fuzz::consume_records(*source);
  } catch (const OpenError&) {
  } catch (const SourceError&) {
  }
  // Drops the pipe (and what the reader left in it).
  if (dup2(saved_stdin, STDIN_FILENO) < 0) std::abort();
  ::close(saved_stdin);
  return 0;
}
