#include "collector/cli/ctl_summary.h"

#include <cstdio>

namespace profcollect {

namespace {

using json = nlohmann::ordered_json;

uint64_t number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

double real(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

std::string text(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string bytes(uint64_t n) {
  char out[32];
  if (n < 1024) return std::to_string(n) + " B";
  if (n < (uint64_t{1} << 20))
    std::snprintf(out, sizeof out, "%.1f KiB", static_cast<double>(n) / 1024);
  else if (n < (uint64_t{1} << 30))
    std::snprintf(out, sizeof out, "%.1f MiB", static_cast<double>(n) / (1 << 20));
  else
    std::snprintf(out, sizeof out, "%.1f GiB", static_cast<double>(n) / (1 << 30));
  return out;
}

std::string seconds(double s) {
  char out[32];
  std::snprintf(out, sizeof out, s < 10 ? "%.2f s" : "%.0f s", s);
  return out;
}

std::string uptime(uint64_t s) {
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min";
  if (s < 86400) return std::to_string(s / 3600) + " h " + std::to_string(s % 3600 / 60) + " min";
  return std::to_string(s / 86400) + " d " + std::to_string(s % 86400 / 3600) + " h";
}

// "123 (ring_buffer 100, backlog_full 23)", or "0".
std::string lost(const json& by_reason) {
  const uint64_t total = number(by_reason, "samples");
  std::string out = std::to_string(total);
  if (!total) return out;
  std::string reasons;
  for (const char* r : {"ring_buffer", "kernel_dropped", "backlog_full", "bpf_map_full"}) {
    if (const uint64_t n = number(by_reason, r))
      reasons += (reasons.empty() ? "" : ", ") + std::string(r) + " " + std::to_string(n);
  }
  return out + " (" + reasons + ")";
}

std::string failure_line(const json& f) {
  std::string who = text(f, "binary");
  if (who.empty()) who = text(f, "directory");
  return "  " + who + ": " + text(f, "reason") + "\n";
}

std::string status_summary(const json& s) {
  std::string out;
  const bool collecting = s.value("collecting", false);
  if (collecting) {
    std::string rate = s.contains("frequency_hz")
                           ? std::to_string(number(s, "frequency_hz")) + " Hz"
                           : "a period of " + std::to_string(number(s, "period"));
    out += "collecting " + text(s, "event") + " at " + rate + " with " + text(s, "engine") +
           ", up " + uptime(number(s, "uptime_s")) + "\n";
  } else {
    out += "waiting for the next collection window, up " + uptime(number(s, "uptime_s")) + "\n";
  }
  out += "config " + text(s, "config") + "\n";
  const size_t binaries =
      s.contains("binaries") && s["binaries"].is_array() ? s["binaries"].size() : 0;
  out += "output_dir " + text(s, "output_dir") + ": " + bytes(number(s, "disk_bytes")) + ", " +
         std::to_string(binaries) + (binaries == 1 ? " binary" : " binaries") + " profiled now\n";
  std::string samples = "samples " + std::to_string(number(s, "samples"));
  if (s.contains("sample_rate"))
    samples += " (" + std::to_string(static_cast<uint64_t>(real(s, "sample_rate") + 0.5)) + "/s)";
  samples +=
      ", " + std::to_string(number(s, "own_samples")) + " of the daemon itself (not profiled)";
  out += samples + "\n";
  if (s.contains("lost_by_reason")) {
    out += "lost " + lost(s["lost_by_reason"]) + " since the start";
    if (s.contains("lost_last_interval"))
      out += ", " + lost(s["lost_last_interval"]) + " in the last interval";
    out += "\n";
  }
  if (s.contains("backlog")) {
    const json& b = s["backlog"];
    out += "drain backlog " + bytes(number(b, "bytes")) + " of " + bytes(number(b, "limit_bytes")) +
           " (peak " + bytes(number(b, "peak_bytes")) + ")\n";
  }
  if (s.contains("last_flush")) {
    const json& f = s["last_flush"];
    const json& failures = f.contains("failures") ? f["failures"] : json::array();
    out += "last flush " + text(f, "time") + ": ";
    if (f.value("ok", false)) {
      out += "ok, " + std::to_string(number(f, "binaries_written")) + " binaries written in " +
             seconds(real(f, "seconds")) + "\n";
    } else {
      out += "FAILED after " + seconds(real(f, "seconds"));
      if (f.value("cut_short", false))
        out += ", cut short with " + std::to_string(number(f, "binaries_pending")) +
               " binaries unwritten";
      out += failures.empty() ? "\n" : ", " + std::to_string(failures.size()) + " not written:\n";
      for (const json& e : failures) out += failure_line(e);
    }
  } else {
    out += "last flush: none yet\n";
  }
  if (s.contains("kernel_profile")) {
    const json& k = s["kernel_profile"];
    out += "kernel profile in progress: " + seconds(real(k, "remaining_s")) + " of " +
           seconds(real(k, "duration_s")) + " left, " + std::to_string(number(k, "samples")) +
           " samples, into " + text(k, "output_dir") + "\n";
  }
  if (s.contains("kernel")) {
    const json& k = s["kernel"];
    if (k.contains("error")) {
      out += "kernel = true, but no kernel profile: " + text(k, "error") + "\n";
    } else {
      out += "kernel = true: " + text(k, "event") + ", " + std::to_string(number(k, "samples")) +
             " samples into " + text(k, "directory") + "\n";
    }
  }
  if (s.contains("unmapped") && s["unmapped"].is_object()) {
    std::string unmapped;
    for (const auto& [reason, count] : s["unmapped"].items()) {
      if (count.is_number_unsigned() && count.get<uint64_t>())
        unmapped +=
            (unmapped.empty() ? "" : ", ") + reason + " " + std::to_string(count.get<uint64_t>());
    }
    if (!unmapped.empty()) out += "not profiled: " + unmapped + "\n";
  }
  return out;
}

}  // namespace

std::string summarize_reply(const std::string& command, const json& reply) {
  if (command == "status") return status_summary(reply);
  if (command == "flush") {
    if (!reply.value("flushed", false))
      return "nothing to flush: between collection windows everything is written\n";
    return "flushed: " + std::to_string(number(reply, "binaries_written")) +
           " binaries written in " + seconds(real(reply, "seconds")) + "\n";
  }
  if (command == "reload") return "configuration reloaded\n";
  if (command == "kernel") {
    return "kernel profile in " + text(reply, "path") + ": " +
           std::to_string(number(reply, "samples")) + " samples (" +
           std::to_string(number(reply, "module_samples")) + " in modules), " +
           (reply.value("symbolized", false) ? "symbolized with the vmlinux"
                                             : "by /proc/kallsyms (no vmlinux)") +
           "\n";
  }
  return reply.dump(2) + "\n";
}

}  // namespace profcollect
