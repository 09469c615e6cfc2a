// Fuzz target: the daemon's TOML configuration (collector/service/daemon_config.h), which an
// administrator writes and a reload reads again while the daemon runs. The only acceptable
// failure is DaemonConfigError, whose message names the source ("FILE:LINE: ..." or
// "FILE: ..."). What parses must print (`daemon --check-config`) to a file that parses to the
// same configuration.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collector/service/daemon_config.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace profcollect;

bool same(const DaemonConfig& a, const DaemonConfig& b) {
  return a.output_dir == b.output_dir && a.socket == b.socket && a.event == b.event &&
         a.frequency == b.frequency && a.period == b.period && a.branch_stacks == b.branch_stacks &&
         a.flush_interval == b.flush_interval && a.final_flush_timeout == b.final_flush_timeout &&
         a.schedule == b.schedule && a.binaries == b.binaries && a.exclude == b.exclude &&
         a.kernel == b.kernel && a.max_disk_bytes == b.max_disk_bytes &&
         a.retention_days == b.retention_days && a.engine == b.engine &&
         a.allowed_group == b.allowed_group && a.mmap_pages == b.mmap_pages &&
         a.backlog_mb == b.backlog_mb && a.same_session(b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string source = "fuzzed.toml";
  DaemonConfig config;
  try {
    config = parse_daemon_config(text, source);
  } catch (const DaemonConfigError& e) {
    if (std::string_view(e.what()).rfind(source, 0) != 0) __builtin_trap();  // names the file
    return 0;
  }
  fuzz::touch(config.output_dir);
  fuzz::touch(config.socket);
  for (const std::string& p : config.binaries) fuzz::touch(p);
  const std::string printed = format_daemon_config(config);
  try {
    if (!same(parse_daemon_config(printed, "printed"), config)) __builtin_trap();
  } catch (const DaemonConfigError&) {
    __builtin_trap();  // a configuration that parsed prints to one that does not
  }
  return 0;
}
