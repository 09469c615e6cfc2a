#include "collector/cli/report_directory.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collector/cli/cli_error.h"
#include "output/directory_handle.h"
#include "output/fdata_reader.h"
#include "output/json_text.h"
#include "output/profile_directory.h"

namespace profcollect {

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct FunctionCount {
  std::string name;
  uint64_t samples = 0;
};

// One DIR/<binary>-<id>/ directory as its files describe it.
struct BinaryReport {
  std::string directory;
  nlohmann::json meta;                   // meta.json as written (null when missing or bad)
  std::vector<FunctionCount> functions;  // largest first
  uint64_t fdata_samples = 0;
  std::vector<std::string> set_aside;     // bolt.fdata.unreadable-* left by an earlier run
  std::string fdata_name = "bolt.fdata";  // the no_lbr profile read
  uint64_t branch_stacks = 0;             // with branch samples
};

// fdata names escape spaces and backslashes with a backslash; print them as the symbol reads.
std::string unescape_name(const std::string& escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] == '\\' && i + 1 < escaped.size()) ++i;
    out.push_back(escaped[i]);
  }
  return out;
}

std::vector<FunctionCount> function_totals(const NoLbrFdata& fdata) {
  std::map<std::string, uint64_t> per_name;
  for (const auto& [key, count] : fdata.counts) per_name[key.first] += count;
  std::vector<FunctionCount> out;
  out.reserve(per_name.size());
  for (const auto& [name, count] : per_name) out.push_back({unescape_name(name), count});
  std::sort(out.begin(), out.end(), [](const FunctionCount& a, const FunctionCount& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.name < b.name;
  });
  return out;
}

template <typename Json>
uint64_t number(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_unsigned()) return 0;
  return j[key].template get<uint64_t>();
}

template <typename Json>
std::string text(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return {};
  return j[key].template get<std::string>();
}

double percent(uint64_t part, uint64_t whole) { return whole ? 100.0 * part / whole : 0.0; }

// "2026-11-30 11:00:28.457 UTC" for Unix-epoch nanoseconds; "-" for 0 (unknown).
std::string utc_time(uint64_t ns) {
  if (ns == 0) return "-";
  const time_t seconds = static_cast<time_t>(ns / 1000000000ull);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  char out[96];
  std::snprintf(out, sizeof out, "%s.%03u UTC", buf, static_cast<unsigned>(ns / 1000000ull % 1000));
  return out;
}

std::string seconds_between(uint64_t from_ns, uint64_t to_ns) {
  if (from_ns == 0 || to_ns < from_ns) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(to_ns - from_ns) / 1e9);
  return buf;
}

// One binary's directory, read by the codec's rules (output/profile_directory.h): each fault
// is a problem, and what could be read is reported.
BinaryReport read_binary(const DirectoryHandle& root, const std::string& name,
                         std::vector<std::string>& problems) {
  BinaryReport b;
  b.directory = name;
  std::optional<DirectoryHandle> dir;
  try {
    dir = root.open_subdirectory(name);  // a link is refused, never followed
  } catch (const OutputError& e) {
    problems.push_back(e.what());
    return b;
  }
  if (!dir) return b;  // gone meanwhile
  ProfileDirectory read = read_profile_directory(*dir, DirectoryStrictness::Report);
  if (name.starts_with("kernel.kallsyms-")) {
    // The kernel's kallsyms directory has totals of its own.
    for (DirectoryFault& f : read_kallsyms_directory(*dir, DirectoryStrictness::Report).faults) {
      read.faults.push_back(std::move(f));
    }
  }
  for (const DirectoryFault& f : read.faults) problems.push_back(f.text());
  b.meta = read.meta;
  // With branch samples bolt.fdata holds branches; where time went is in the IP samples' profile.
  if (text(b.meta, "bolt_fdata") == "branch") b.branch_stacks = number(b.meta, "branch_stacks");
  if (!read.no_lbr_file.empty()) {
    b.fdata_name = read.no_lbr_file;
    b.fdata_samples = read.totals[read.no_lbr_file];
    b.functions = function_totals(read.counts.no_lbr);
  }
  b.set_aside = read.set_aside;
  return b;
}

void print_collection(const std::string& dir, const ordered_json& c) {
  const uint64_t samples = number(c, "samples"), lost = number(c, "lost");
  std::string rate = c.contains("frequency_hz") ? std::to_string(number(c, "frequency_hz")) + " Hz"
                     : c.contains("period")     ? "period " + std::to_string(number(c, "period"))
                                                : "unknown rate";
  const std::string engine = c.contains("engine") ? ", engine " + text(c, "engine") : "";
  std::printf("%s: %s at %s%s, %s to %s (%s)\n", dir.c_str(), text(c, "event").c_str(),
              rate.c_str(), engine.c_str(), utc_time(number(c, "start_ns")).c_str(),
              utc_time(number(c, "end_ns")).c_str(),
              seconds_between(number(c, "start_ns"), number(c, "end_ns")).c_str());
  std::printf("  %-28s %12" PRIu64 "\n", "samples", samples);
  // The lost samples never arrived, so their share is of what the kernel took.
  std::printf("  %-28s %12" PRIu64 "  (%.2f%% of %" PRIu64 " taken; %" PRIu64 " LOST records)\n",
              "lost", lost, percent(lost, samples + lost), samples + lost,
              number(c, "lost_records"));
  std::printf("  %-28s %12" PRIu64 "\n", "throttled", number(c, "throttled"));
  // The BPF engine's counts that no binary got: their address changed mapping within a drain
  // interval (never guessed), or the program could not store them (in `lost` too).
  if (c.contains("bpf") && c["bpf"].is_object()) {
    const uint64_t counted = number(c["bpf"], "counted"), ambiguous = number(c["bpf"], "ambiguous");
    std::printf("  %-28s %12" PRIu64 "  (%.2f%% of %" PRIu64 " counted in the kernel; %" PRIu64
                " not stored)\n",
                "ambiguous", ambiguous, percent(ambiguous, counted), counted,
                number(c["bpf"], "not_stored"));
  }
  // Arm SPE: what the AUX records said (data lost to a full area, gaps, collided samples) and
  // what the decoder made of the bytes.
  if (c.contains("arm_spe") && c["arm_spe"].is_object()) {
    const ordered_json& a = c["arm_spe"];
    std::printf("  %-28s %12" PRIu64 "  (%" PRIu64 " bytes; %" PRIu64 " truncated, %" PRIu64
                " restarts after truncation, %" PRIu64 " partial, %" PRIu64 " collision)\n",
                "SPE AUX records", number(a, "aux_records"), number(a, "aux_bytes"),
                number(a, "aux_truncated"), number(a, "restarts_after_truncation"),
                number(a, "aux_partial"), number(a, "aux_collisions"));
    std::printf("  %-28s %12" PRIu64 "  (%" PRIu64 " taken branches; %" PRIu64 " dropped, %" PRIu64
                " bytes skipped, %" PRIu64 " without a thread)\n",
                "SPE records", number(a, "records"), number(a, "taken_branches"),
                number(a, "records_dropped"), number(a, "bytes_skipped"),
                number(a, "threads_unknown"));
  }
  std::printf("  %-28s %12" PRIu64 "  (%.2f%%) in %" PRIu64 " profiled binaries\n", "mapped",
              number(c, "mapped"), percent(number(c, "mapped"), samples), number(c, "binaries"));
  if (c.contains("unmapped") && c["unmapped"].is_object()) {
    for (const auto& [reason, count] : c["unmapped"].items()) {
      if (!count.is_number_unsigned() || count.get<uint64_t>() == 0) continue;
      const std::string label = "unmapped, " + reason;
      std::printf("  %-28s %12" PRIu64 "  (%.2f%%)\n", label.c_str(), count.get<uint64_t>(),
                  percent(count.get<uint64_t>(), samples));
    }
  }
}

}  // namespace

std::string translation_line(const ordered_json& bat, uint64_t samples) {
  const std::string input = text(bat, "input_build_id");
  if (text(bat, "status") == "merged") {
    std::string ids;
    if (bat.contains("bolted_build_ids") && bat["bolted_build_ids"].is_array()) {
      for (const auto& id : bat["bolted_build_ids"]) {
        if (id.is_string()) ids += (ids.empty() ? "" : ", ") + id.get<std::string>();
      }
    }
    return "merged with profiles that BAT translated from BOLTed builds of it (build-ids " + ids +
           ")";
  }
  if (text(bat, "status") != "translated") {
    return "BOLTed, not translated: " + text(bat, "reason");
  }
  const uint64_t translated = number(bat, "samples_translated");
  char line[512];
  std::snprintf(line, sizeof line,
                "BOLTed: BAT translated %" PRIu64 " of %" PRIu64
                " samples (%.2f%%) to the input binary (build-id %s); %" PRIu64
                " in cold fragments, %" PRIu64 " in functions BOLT did not rewrite, %" PRIu64
                " in no function",
                translated, samples, percent(translated, samples),
                input.empty() ? "none" : input.c_str(), number(bat, "samples_in_cold_fragments"),
                number(bat, "samples_not_rewritten"), number(bat, "samples_in_no_function"));
  return line;
}

namespace {

void print_binary(const BinaryReport& b, size_t top) {
  const std::string path = text(b.meta, "path");
  std::printf("\n%s  %s\n", b.directory.c_str(), path.empty() ? "(path unknown)" : path.c_str());
  const std::string build_id = text(b.meta, "build_id");
  const uint64_t samples = number(b.meta, "samples");
  std::printf("  build-id %s, event %s\n", build_id.empty() ? "none" : build_id.c_str(),
              text(b.meta, "event").c_str());
  std::printf("  %" PRIu64 " samples, %" PRIu64 " of them in functions (%s), %s to %s\n", samples,
              b.fdata_samples, b.fdata_name.c_str(),
              utc_time(number(b.meta, "first_sample_ns")).c_str(),
              utc_time(number(b.meta, "last_sample_ns")).c_str());
  if (b.branch_stacks) {
    std::printf("  %" PRIu64
                " branch stacks (bolt.fdata, bolt.preagg and autofdo.prof are made from them)\n",
                b.branch_stacks);
  }
  if (b.meta.is_object() && b.meta.contains("bolt_address_translation")) {
    std::printf(
        "  %s\n",
        translation_line(ordered_json(b.meta["bolt_address_translation"]), samples).c_str());
  }
  if (b.meta.is_object() && b.meta.contains("bolt_inferred") &&
      text(b.meta["bolt_inferred"], "edges") == "ip_samples") {
    const ordered_json& inferred = b.meta["bolt_inferred"];
    const double share =
        inferred.contains("inferred_sample_share") && inferred["inferred_sample_share"].is_number()
            ? inferred["inferred_sample_share"].get<double>()
            : 0.0;
    std::printf("  bolt.inferred.preagg: edges inferred from the IP samples for %" PRIu64
                " of %" PRIu64 " sampled functions (%" PRIu64 " blocks, %" PRIu64
                " of them kept warm), %.2f%% of the samples\n",
                number(inferred, "inferred_functions"), number(inferred, "functions"),
                number(inferred, "inferred_blocks"), number(inferred, "blocks_kept_warm"),
                100.0 * share);
  }
  if (b.meta.is_object() && b.meta.contains("propeller") && b.meta["propeller"].is_object()) {
    const ordered_json& p = b.meta["propeller"];
    const double share = p.contains("sample_share") && p["sample_share"].is_number()
                             ? p["sample_share"].get<double>()
                             : 0.0;
    std::string named, left_out;
    if (const uint64_t n = number(p, "functions_named_by_module"); n > 0)
      named = ", " + std::to_string(n) + " named with their module";
    if (const uint64_t n = number(p, "functions_unnamed"); n > 0)
      left_out =
          "; " + std::to_string(n) + " left out (no symbol, or a name that no module tells apart)";
    std::printf("  propeller: %" PRIu64 " functions clustered (%" PRIu64 " blocks, %" PRIu64
                " of them warm; %" PRIu64 " functions with a warm part, %" PRIu64
                " with a cold part%s), %.2f%% of the samples; edges from %s%s\n",
                number(p, "functions"), number(p, "blocks"), number(p, "warm_blocks"),
                number(p, "functions_with_warm_part"), number(p, "functions_with_cold_part"),
                named.c_str(), 100.0 * share,
                text(p, "edges") == "ip_samples" ? "the IP samples (inferred)" : "branch stacks",
                left_out.c_str());
  }
  for (const auto& aside : b.set_aside) {
    std::printf("  an earlier unreadable profile was set aside as %s\n", aside.c_str());
  }
  if (b.functions.empty()) return;
  std::printf("  %10s %7s  %s\n", "samples", "share", "function");
  for (size_t i = 0; i < b.functions.size() && i < top; ++i) {
    std::printf("  %10" PRIu64 " %6.2f%%  %s\n", b.functions[i].samples,
                percent(b.functions[i].samples, b.fdata_samples), b.functions[i].name.c_str());
  }
  if (b.functions.size() > top) {
    std::printf("  ... %zu more functions\n", b.functions.size() - top);
  }
}

ordered_json binary_json(const BinaryReport& b, size_t top) {
  ordered_json j;
  j["directory"] = b.directory;
  for (const char* key : {"path", "build_id", "event"}) j[key] = text(b.meta, key);
  for (const char* key : {"samples", "first_sample_ns", "last_sample_ns"})
    j[key] = number(b.meta, key);
  j["fdata_samples"] = b.fdata_samples;
  j["branch_stacks"] = b.branch_stacks;
  if (b.meta.is_object() && b.meta.contains("bolt_address_translation"))
    j["bolt_address_translation"] = b.meta["bolt_address_translation"];
  if (b.meta.is_object() && b.meta.contains("bolt_inferred"))
    j["bolt_inferred"] = b.meta["bolt_inferred"];
  if (b.meta.is_object() && b.meta.contains("propeller")) j["propeller"] = b.meta["propeller"];
  j["function_count"] = b.functions.size();
  j["functions"] = ordered_json::array();
  for (size_t i = 0; i < b.functions.size() && i < top; ++i) {
    j["functions"].push_back(
        {{"name", b.functions[i].name},
         {"samples", b.functions[i].samples},
         {"share",
          b.fdata_samples ? static_cast<double>(b.functions[i].samples) / b.fdata_samples : 0.0}});
  }
  j["set_aside"] = b.set_aside;
  return j;
}

}  // namespace

bool is_collection_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && !fs::exists(fs::path(path) / "data", ec);
}

int run_directory_report(const ReportOptions& o) {
  if (!o.binary.empty()) {
    throw CliError("report " + o.input +
                       ": a collection directory takes no BINARY (its profiles "
                       "name their binaries)",
                   2);
  }
  if (o.pid) throw CliError("report " + o.input + ": --pid applies to perf.data input only", 2);
  // Everything in it is reached through its descriptor and never through a link.
  std::optional<DirectoryHandle> root;
  try {
    // The path given is the user's choice (is_collection_directory found a directory there).
    root.emplace(DirectoryHandle::open_path(o.input, 0700));
  } catch (const OutputError& e) {
    throw CliError(std::string(e.what()));
  }
  std::vector<std::string> problems;

  ordered_json collection;  // null when absent
  const std::string collection_path = root->path_of("collection.json");
  bool has_collection = false;
  try {
    if (std::optional<std::string> content = root->read_file("collection.json")) {
      has_collection = true;
      collection = ordered_json::parse(*content, nullptr, false);
      if (collection.is_discarded() || !collection.is_object()) {
        collection = nullptr;
        problems.push_back(collection_path + ": not a JSON object");
      }
    }
  } catch (const OutputError& e) {
    has_collection = true;
    problems.push_back(e.what());
  }

  // A subdirectory is a binary's profile when it holds either of the two files a flush writes;
  // hidden entries are generations being written or left by a killed run.
  std::vector<std::string> subdirs;
  try {
    for (const std::string& entry : root->entries()) {
      if (entry.starts_with(".") || entry == "collection.json") continue;
      struct stat st {};
      if (::fstatat(root->fd(), entry.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISLNK(st.st_mode)) {
        problems.push_back(root->path_of(entry) + ": is a symbolic link: not followed");
        continue;
      }
      if (!S_ISDIR(st.st_mode)) continue;
      const std::string meta = entry + "/meta.json", fdata = entry + "/bolt.fdata";
      if (::fstatat(root->fd(), meta.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ||
          ::fstatat(root->fd(), fdata.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        subdirs.push_back(entry);
      }
    }
  } catch (const OutputError& e) {
    throw CliError(std::string(e.what()));
  }
  std::sort(subdirs.begin(), subdirs.end());
  if (subdirs.empty() && !has_collection) {
    throw CliError(o.input +
                   ": holds no profcollect output (no collection.json, no "
                   "<binary>-<build-id>/ profile directories)");
  }

  std::vector<BinaryReport> binaries;
  for (const auto& s : subdirs) binaries.push_back(read_binary(*root, s, problems));
  // Most samples first: the binaries that matter most lead the report.
  std::stable_sort(binaries.begin(), binaries.end(),
                   [](const BinaryReport& a, const BinaryReport& b) {
                     return number(a.meta, "samples") > number(b.meta, "samples");
                   });

  if (o.json) {
    // The schema of a recording's report (report_command.cpp, docs/usage.md), then what only a
    // collection has.
    ordered_json j;
    j["input"] = o.input;
    j["kind"] = "collection";
    j["samples"] = number(collection, "samples");
    j["lost"] = number(collection, "lost");
    j["throttled"] = number(collection, "throttled");
    j["events"] = ordered_json::array();
    if (!text(collection, "event").empty()) j["events"].push_back(text(collection, "event"));
    j["binaries"] = ordered_json::array();
    for (const auto& b : binaries) j["binaries"].push_back(binary_json(b, o.top));
    j["problems"] = problems;
    j["lost_records"] = number(collection, "lost_records");
    j["collection"] = collection;
    std::cout << json_text(j) << "\n";
  } else {
    if (collection.is_object()) {
      print_collection(o.input, collection);
    } else {
      std::printf("%s: no collection summary (collection.json)\n", o.input.c_str());
    }
    for (const auto& b : binaries) print_binary(b, o.top);
    if (binaries.empty()) std::printf("\nno binary profiles\n");
    for (const auto& p : problems) std::printf("\nproblem: %s\n", p.c_str());
    std::fflush(stdout);
  }
  if (!problems.empty()) {
    throw CliError(o.input + ": " + std::to_string(problems.size()) +
                   " file(s) could not be read; "
                   "first: " +
                   problems.front());
  }
  return 0;
}

}  // namespace profcollect
