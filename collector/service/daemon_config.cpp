#include "collector/service/daemon_config.h"

#include "output/profile_format.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <toml++/toml.h>

#include "collector/live/event_selection.h"
#include "collector/host/path_pattern.h"
#include "collector/host/setting_ranges.h"

namespace profcollect {

namespace {

using std::chrono::milliseconds;

constexpr milliseconds kMinFlushInterval{100};
constexpr milliseconds kMaxDuration{std::chrono::hours(24 * 366)};

std::string toml_number_text(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// Where a value or key was read, for the error: "FILE:LINE: key: reason".
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const toml::source_region& where, const std::string& key,
                         const std::string& why) const {
    std::string at = source_;
    if (where.begin.line) at += ":" + std::to_string(where.begin.line);
    throw DaemonConfigError(at + ": " + key + ": " + why);
  }

  std::string string(const toml::node& n, const std::string& key) const {
    if (const auto* s = n.as_string()) return s->get();
    fail(n.source(), key, std::string("expected a string, found ") + type_name(n));
  }
  bool boolean(const toml::node& n, const std::string& key) const {
    if (const auto* b = n.as_boolean()) return b->get();
    fail(n.source(), key, std::string("expected true or false, found ") + type_name(n));
  }
  uint64_t whole(const toml::node& n, const std::string& key, uint64_t min, uint64_t max) const {
    const auto* i = n.as_integer();
    if (!i) fail(n.source(), key, std::string("expected a whole number, found ") + type_name(n));
    const int64_t v = i->get();
    if (v < 0 || static_cast<uint64_t>(v) < min || static_cast<uint64_t>(v) > max) {
      fail(n.source(), key,
           std::to_string(v) + " is out of range [" + std::to_string(min) + ", " +
               std::to_string(max) + "]");
    }
    return static_cast<uint64_t>(v);
  }
  // A positive number, whole or not (TOML integer or float), between `min` and `max`.
  double positive(const toml::node& n, const std::string& key, double min, double max) const {
    double v = 0;
    if (const auto* i = n.as_integer()) {
      v = static_cast<double>(i->get());
    } else if (const auto* f = n.as_floating_point()) {
      v = f->get();
    } else {
      fail(n.source(), key, std::string("expected a number, found ") + type_name(n));
    }
    if (!(v >= min && v <= max)) {  // NaN fails too
      char range[96];
      std::snprintf(range, sizeof range, " is out of range [%g, %g]", min, max);
      fail(n.source(), key, toml_number_text(v) + range);
    }
    return v;
  }
  // A duration: a string with a unit ("2s", "10min") or a whole number of seconds.
  milliseconds duration(const toml::node& n, const std::string& key, milliseconds min) const {
    milliseconds d{0};
    if (const auto* i = n.as_integer()) {
      if (i->get() <= 0 || i->get() > kMaxDuration.count() / 1000) {
        fail(n.source(), key, std::to_string(i->get()) + " seconds is out of range");
      }
      d = std::chrono::seconds(i->get());
    } else if (const auto* s = n.as_string()) {
      const auto parsed = parse_duration(s->get());
      if (!parsed)
        fail(n.source(), key,
             "\"" + s->get() + "\" is not a duration (e.g. \"500ms\", \"2s\", \"10min\", \"1h\")");
      d = *parsed;
    } else {
      fail(n.source(), key,
           std::string("expected a duration such as \"2s\", found ") + type_name(n));
    }
    if (d < min || d > kMaxDuration) {
      fail(n.source(), key, "must be between " + std::to_string(min.count()) + "ms and a year");
    }
    return d;
  }
  std::vector<std::string> patterns(const toml::node& n, const std::string& key) const {
    const auto* a = n.as_array();
    if (!a)
      fail(n.source(), key,
           std::string("expected an array of regular expressions, found ") + type_name(n));
    std::vector<std::string> out;
    for (const toml::node& e : *a) {
      std::string p = string(e, key);
      try {
        (void)compile_path_pattern(p);
      } catch (const std::regex_error& err) {
        fail(e.source(), key, "\"" + p + "\" is not a regular expression: " + err.what());
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  // Profile formats by name (output/profile_format.h), each once.
  std::vector<std::string> formats(const toml::node& n, const std::string& key) const {
    const auto* a = n.as_array();
    if (!a)
      fail(n.source(), key,
           std::string("expected an array of format names, found ") + type_name(n));
    std::vector<std::string> out;
    for (const toml::node& e : *a) {
      std::string name = string(e, key);
      if (!find_format(name)) {
        fail(e.source(), key, "\"" + name + "\" is not one of " + format_names());
      }
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    }
    if (out.empty()) fail(n.source(), key, "name at least one of " + format_names());
    return out;
  }

  static const char* type_name(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::string:
        return "a string";
      case toml::node_type::integer:
        return "an integer";
      case toml::node_type::floating_point:
        return "a floating-point number";
      case toml::node_type::boolean:
        return "a boolean";
      case toml::node_type::array:
        return "an array";
      case toml::node_type::table:
        return "a table";
      default:
        return "a date or time";
    }
  }

 private:
  std::string source_;
};

void read_schedule(const Reader& r, const toml::node& n, DaemonConfig& c) {
  if (const auto* s = n.as_string()) {
    if (s->get() != "continuous") {
      r.fail(n.source(), "schedule",
             "\"" + s->get() + "\": expected \"continuous\" or { on = \"2s\", every = \"10min\" }");
    }
    c.schedule.reset();
    return;
  }
  const auto* t = n.as_table();
  if (!t)
    r.fail(n.source(), "schedule",
           std::string("expected \"continuous\" or a table, found ") + Reader::type_name(n));
  DutyCycle d;
  bool has_on = false, has_every = false;
  for (const auto& [k, v] : *t) {
    const std::string key = "schedule." + std::string(k.str());
    if (k.str() == "on") {
      d.on = r.duration(v, key, milliseconds(1));
      has_on = true;
    } else if (k.str() == "every") {
      d.every = r.duration(v, key, milliseconds(1));
      has_every = true;
    } else {
      r.fail(k.source(), key, "unknown key (schedule takes on and every)");
    }
  }
  if (!has_on || !has_every) r.fail(n.source(), "schedule", "a duty cycle needs both on and every");
  if (d.on >= d.every) r.fail(n.source(), "schedule", "on must be shorter than every");
  c.schedule = d;
}

}  // namespace

std::optional<milliseconds> parse_duration(std::string_view text) {
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (value > (uint64_t{1} << 40)) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(text[i] - '0');
    ++i;
  }
  if (i == 0) return std::nullopt;
  const std::string_view unit = text.substr(i);
  static const std::map<std::string_view, uint64_t> kUnits = {
      {"ms", 1}, {"s", 1000}, {"min", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}};
  const auto u = kUnits.find(unit);
  if (u == kUnits.end()) return std::nullopt;
  return milliseconds(static_cast<int64_t>(value * u->second));
}

std::string daemon_config_key(std::string_view setting) {
  if (setting == "branch_any" || setting == "branch_filter") return "branch_stacks";
  return std::string(setting);
}

std::vector<std::string> default_formats() {
  std::vector<std::string> names;
  for (ProfileFormat f : live_default_formats()) names.emplace_back(f->name);
  return names;
}

bool DaemonConfig::same_session(const DaemonConfig& o) const {
  return output_dir == o.output_dir && event == o.event && frequency == o.frequency &&
         period == o.period && branch_stacks == o.branch_stacks && binaries == o.binaries &&
         exclude == o.exclude && engine == o.engine && mmap_pages == o.mmap_pages &&
         backlog_mb == o.backlog_mb && formats == o.formats;
}

DaemonConfig parse_daemon_config(std::string_view text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw DaemonConfigError(source + ":" + std::to_string(e.source().begin.line) + ": " +
                            std::string(e.description()));
  }
  const Reader r(source);
  DaemonConfig c;
  const toml::node* frequency_node = nullptr;
  const toml::node* period_node = nullptr;
  const toml::node* event_node = nullptr;
  using Setter = std::function<void(const toml::node&, const std::string&)>;
  const std::map<std::string, Setter, std::less<>> setters = {
      {"output_dir",
       [&](const toml::node& n, const std::string& k) {
         c.output_dir = r.string(n, k);
         if (c.output_dir.empty() || c.output_dir[0] != '/')
           r.fail(n.source(), k, "must be an absolute path");
       }},
      {"socket",
       [&](const toml::node& n, const std::string& k) {
         c.socket = r.string(n, k);
         if (c.socket.empty() || c.socket[0] != '/')
           r.fail(n.source(), k, "must be an absolute path");
         if (c.socket.size() >= sizeof(sockaddr_un{}.sun_path)) {
           r.fail(n.source(), k,
                  "longer than a unix socket path can be (" +
                      std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes)");
         }
       }},
      {"event",
       [&](const toml::node& n, const std::string& k) {
         c.event = r.string(n, k);
         event_node = &n;
       }},
      {"frequency",
       [&](const toml::node& n, const std::string& k) {
         c.frequency = r.whole(n, k, 1, kMaxFrequency);
         frequency_node = &n;
       }},
      {"period",
       [&](const toml::node& n, const std::string& k) {
         c.period = r.whole(n, k, 1, kMaxPeriod);
         period_node = &n;
       }},
      {"branch_stacks",
       [&](const toml::node& n, const std::string& k) { c.branch_stacks = r.boolean(n, k); }},
      {"final_flush_timeout",
       [&](const toml::node& n, const std::string& k) {
         c.final_flush_timeout = r.duration(n, k, kMinFlushInterval);
       }},
      {"flush_interval",
       [&](const toml::node& n, const std::string& k) {
         c.flush_interval = r.duration(n, k, kMinFlushInterval);
       }},
      {"schedule", [&](const toml::node& n, const std::string&) { read_schedule(r, n, c); }},
      {"binaries",
       [&](const toml::node& n, const std::string& k) { c.binaries = r.patterns(n, k); }},
      {"exclude", [&](const toml::node& n, const std::string& k) { c.exclude = r.patterns(n, k); }},
      {"kernel", [&](const toml::node& n, const std::string& k) { c.kernel = r.boolean(n, k); }},
      {"formats", [&](const toml::node& n, const std::string& k) { c.formats = r.formats(n, k); }},
      {"max_disk_mb",
       [&](const toml::node& n, const std::string& k) {
         // At least a KiB; a fraction is for small hosts (and tests): the directory's files
         // are counted in bytes.
         const double mb = r.positive(n, k, 1.0 / 1024, static_cast<double>(uint64_t{1} << 40));
         c.max_disk_bytes = static_cast<uint64_t>(mb * static_cast<double>(uint64_t{1} << 20));
       }},
      {"retention_days",
       [&](const toml::node& n, const std::string& k) {
         c.retention_days = r.whole(n, k, 1, 36'500);
       }},
      {"engine",
       [&](const toml::node& n, const std::string& k) {
         c.engine = r.string(n, k);
         if (c.engine != "perf" && c.engine != "bpf" && c.engine != "auto") {
           r.fail(n.source(), k, "\"" + c.engine + "\": expected \"perf\", \"bpf\" or \"auto\"");
         }
       }},
      {"mmap_pages",
       [&](const toml::node& n, const std::string& k) {
         const uint64_t pages = r.whole(n, k, 1, kMaxMmapPages);
         if (pages & (pages - 1))
           r.fail(n.source(), k, std::to_string(pages) + " is not a power of two");
         c.mmap_pages = pages;
       }},
      {"backlog_mb",
       [&](const toml::node& n, const std::string& k) {
         c.backlog_mb = r.whole(n, k, kMinBacklogMb, kMaxBacklogMb);
       }},
      {"allowed_group",
       [&](const toml::node& n, const std::string& k) {
         c.allowed_group = r.string(n, k);
         if (!c.allowed_group.empty() && ::getgrnam(c.allowed_group.c_str()) == nullptr) {
           r.fail(n.source(), k, "no group named \"" + c.allowed_group + "\"");
         }
       }},
  };
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    const auto it = setters.find(k);
    if (it == setters.end()) r.fail(key.source(), k, "unknown key");
    it->second(node, k);
  }
  if (frequency_node && period_node) {
    const toml::node& later = frequency_node->source().begin.line > period_node->source().begin.line
                                  ? *frequency_node
                                  : *period_node;
    r.fail(later.source(), &later == frequency_node ? "frequency" : "period",
           "frequency and period exclude each other: set one");
  }
  if (event_node) {
    try {
      (void)parse_event_request(c.event, c.branch_stacks, "");
    } catch (const EventSelectionError& e) {
      r.fail(event_node->source(), "event", e.spelled(daemon_config_key));
    }
  }
  return c;
}

DaemonConfig load_daemon_config(const std::string& path) {
  // Opened without blocking (a FIFO would wait for a writer) and checked for what it is before
  // anything is read: a directory reads as an empty file, which would be every default.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw DaemonConfigError(path + ": cannot be read: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw DaemonConfigError(path + ": cannot be read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    const char* what = S_ISDIR(st.st_mode)                          ? "a directory"
                       : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                       : S_ISSOCK(st.st_mode)                       ? "a socket"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                    : "not a regular file";
    throw DaemonConfigError(path + ": is " + std::string(what) + ", not a configuration file");
  }
  constexpr off_t kMaxBytes = 1 << 20;
  if (st.st_size > kMaxBytes) {
    throw DaemonConfigError(path + ": " + std::to_string(st.st_size) +
                            " bytes, more than a configuration (1 MiB)");
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw DaemonConfigError(path + ": cannot be read: " + std::strerror(errno));
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > static_cast<size_t>(kMaxBytes))
      throw DaemonConfigError(path + ": grew past 1 MiB while read");
  }
  return parse_daemon_config(text, path);
}

std::string format_daemon_config(const DaemonConfig& c) {
  auto patterns = [](const std::vector<std::string>& list) {
    toml::array a;
    for (const std::string& p : list) a.push_back(p);
    return a;
  };
  auto duration = [](std::chrono::milliseconds d) {
    const int64_t ms = d.count();
    if (ms % 86'400'000 == 0) return std::to_string(ms / 86'400'000) + "d";
    if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
    if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + "min";
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
  };
  toml::table t;
  t.insert("output_dir", c.output_dir);
  t.insert("socket", c.socket);
  t.insert("event", c.event);
  if (c.frequency) t.insert("frequency", static_cast<int64_t>(*c.frequency));
  if (c.period) t.insert("period", static_cast<int64_t>(*c.period));
  t.insert("branch_stacks", c.branch_stacks);
  t.insert("flush_interval", duration(c.flush_interval));
  t.insert("final_flush_timeout", duration(c.final_flush_timeout));
  if (c.schedule) {
    t.insert("schedule",
             toml::table{{"on", duration(c.schedule->on)}, {"every", duration(c.schedule->every)}});
  } else {
    t.insert("schedule", "continuous");
  }
  t.insert("binaries", patterns(c.binaries));
  t.insert("exclude", patterns(c.exclude));
  t.insert("kernel", c.kernel);
  toml::array formats;
  for (const std::string& f : c.formats) formats.push_back(f);
  t.insert("formats", formats);
  if (c.max_disk_bytes)
    t.insert("max_disk_mb", static_cast<double>(*c.max_disk_bytes) / static_cast<double>(1 << 20));
  if (c.retention_days) t.insert("retention_days", static_cast<int64_t>(*c.retention_days));
  t.insert("engine", c.engine);
  t.insert("allowed_group", c.allowed_group);
  if (c.mmap_pages) t.insert("mmap_pages", static_cast<int64_t>(*c.mmap_pages));
  t.insert("backlog_mb", static_cast<int64_t>(c.backlog_mb));
  std::ostringstream out;
  out << toml::toml_formatter(
      t, toml::toml_formatter::default_flags & ~toml::format_flags::indentation);
  // The keys left unset, said as such, before the tables.
  std::string text;
  if (!c.frequency && !c.period)
    text += "# frequency, period: not set (the event's default rate)\n";
  if (!c.max_disk_bytes) text += "# max_disk_mb: not set (no disk budget)\n";
  if (!c.retention_days) text += "# retention_days: not set (profiles are kept)\n";
  if (!c.mmap_pages) text += "# mmap_pages: not set (chosen from the locked-memory budget)\n";
  return text + out.str() + "\n";
}

}  // namespace profcollect
