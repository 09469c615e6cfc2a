// The daemon's configuration: a TOML file (systemd/profcollect.toml.example documents every key)
// read into DaemonConfig. Every key has a default; an unknown key, a value of the wrong type or
// a bad value is a DaemonConfigError that names the file, the line and the key, so that a
// daemon refuses to start (or, at a reload, keeps the configuration it runs) and says why.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace profcollect {

// Duty-cycled collection: collect for `on`, once every `every` (as Android's profcollectd does).
struct DutyCycle {
  std::chrono::milliseconds on{0};
  std::chrono::milliseconds every{0};
  bool operator==(const DutyCycle&) const = default;
};

// The names of the formats live collection writes by default.
std::vector<std::string> default_formats();

struct DaemonConfig {
  std::string output_dir = "/var/lib/profcollect";
  std::string socket = "/run/profcollect/ctl";
  std::string event = "auto";
  std::optional<uint64_t> frequency;  // samples per second; neither: the event's default rate
  std::optional<uint64_t> period;     // events per sample
  bool branch_stacks = false;         // ask every taken branch (a branch stack)
  std::chrono::milliseconds flush_interval{std::chrono::minutes(1)};
  // How long the final flush may take after SIGTERM (binaries not reached keep their last flush).
  std::chrono::milliseconds final_flush_timeout{std::chrono::seconds(1)};
  std::optional<DutyCycle> schedule;  // none: continuous
  std::vector<std::string> binaries;  // regular expressions on paths; empty: every binary
  std::vector<std::string> exclude;   // regular expressions on paths
  bool kernel = false;
  // The formats written per binary (output/profile_format.h names); live collection's by default
  // (bolt, preagg, bolt-inferred, autofdo).
  std::vector<std::string> formats = default_formats();
  // max_disk_mb, in bytes (MiB of 2^20 bytes; a fraction is allowed: 0.5 is 512 KiB).
  std::optional<uint64_t> max_disk_bytes;
  std::optional<uint64_t> retention_days;
  std::string engine = "perf";
  std::string allowed_group;           // empty: root only
  std::optional<uint64_t> mmap_pages;  // data pages per ring buffer; none: from the lock budget
  uint64_t backlog_mb = 64;            // the drain backlog's limit (kDefaultBacklogBytes)

  // Whether a session opened with `other` would differ (event, rate, branch stacks, binaries,
  // formats, output directory): a reload then restarts the session.
  bool same_session(const DaemonConfig& other) const;
};

class DaemonConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses TOML text; `source` names it in errors ("FILE:LINE: key: reason").
DaemonConfig parse_daemon_config(std::string_view text, const std::string& source);
// Reads and parses the file at `path`, which must be a regular file (a directory, a FIFO or a
// device is refused, without waiting on it). Throws DaemonConfigError.
DaemonConfig load_daemon_config(const std::string& path);

// The configuration as a TOML file that gives every key its value (defaults included; keys
// without a value, such as an unset frequency, as comments): `daemon --check-config`.
std::string format_daemon_config(const DaemonConfig& config);

// How the daemon's configuration spells a session setting (setting_error.h): {branch_any} is
// branch_stacks; the others keep their names.
std::string daemon_config_key(std::string_view setting);

// "2s", "500ms", "10min", "1h", "1d": a duration. nullopt when not one.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace profcollect
