#include "output/binary_directory_reader.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "output/branch_fdata_reader.h"
#include "output/ip_samples_file.h"
#include "output/preagg_reader.h"
#include "output/profile_generation.h"
#include "output/sample_profile_reader.h"

namespace profcollect {

namespace {

// The files a flush writes; anything else in a binary's directory is said and left out.
constexpr const char* kKnownFiles[] = {"meta.json",   "bolt.fdata",   "bolt.nolbr.fdata", "bolt.preagg",
                                       "autofdo.prof", "samples.ip", "samples.branch"};

// Parses `name` when present with `parse(text, &error)`; a damaged file throws, named.
template <typename Parse>
auto read_parsed(const DirectoryHandle& dir, const std::string& name, Parse parse)
    -> decltype(parse(std::string(), static_cast<std::string*>(nullptr))) {
  std::optional<std::string> text = dir.read_file(name);
  if (!text) return std::nullopt;
  std::string error;
  auto parsed = parse(*text, &error);
  if (!parsed) throw OutputError(dir.path_of(name), error);
  return parsed;
}

uint64_t meta_number(const DirectoryHandle& dir, const nlohmann::json& meta, const char* key, bool required) {
  auto it = meta.find(key);
  if (it == meta.end() && !required) return 0;
  if (it == meta.end() || !it->is_number_unsigned()) {
    throw OutputError(dir.path_of("meta.json"), std::string("'") + key + "' is not a whole number");
  }
  return it->get<uint64_t>();
}

std::string meta_text(const DirectoryHandle& dir, const nlohmann::json& meta, const char* key) {
  auto it = meta.find(key);
  if (it == meta.end() || !it->is_string()) {
    throw OutputError(dir.path_of("meta.json"), std::string("'") + key + "' is missing or not a string");
  }
  return it->get<std::string>();
}

}  // namespace

BinaryDirectoryFiles read_binary_directory(const DirectoryHandle& dir) {
  BinaryDirectoryFiles out;
  out.path = dir.path();
  const std::string meta_path = dir.path_of("meta.json");
  std::optional<std::string> meta_content = dir.read_file("meta.json");
  if (!meta_content) throw OutputError(meta_path, "missing: not a profcollect binary profile directory");
  const nlohmann::json meta = nlohmann::json::parse(*meta_content, nullptr, false);
  if (!meta.is_object()) throw OutputError(meta_path, "not a JSON object");
  out.identity.path = meta_text(dir, meta, "path");
  const std::string build_id = meta_text(dir, meta, "build_id");
  if (!build_id.empty()) {
    auto parsed = BuildId::from_hex(build_id);
    if (!parsed) throw OutputError(meta_path, "'build_id' is not a build-id: '" + build_id + "'");
    out.identity.build_id = *parsed;
  }
  out.samples = meta_number(dir, meta, "samples", true);
  out.first_sample_ns = meta_number(dir, meta, "first_sample_ns", false);
  out.last_sample_ns = meta_number(dir, meta, "last_sample_ns", false);
  if (auto it = meta.find("branch_stacks"); it != meta.end()) {
    out.branch_stacks = meta_number(dir, meta, "branch_stacks", true);
  }
  if (auto it = meta.find("events"); it != meta.end()) {
    if (!it->is_array()) throw OutputError(meta_path, "'events' is not a list");
    for (const auto& event : *it) {
      if (!event.is_string()) throw OutputError(meta_path, "'events' holds something other than a name");
      out.events.push_back(event.get<std::string>());
    }
  }
  if (out.events.empty()) {
    if (auto it = meta.find("event"); it != meta.end() && it->is_string() && !it->get<std::string>().empty()) {
      out.events.push_back(it->get<std::string>());
    }
  }
  std::string bolt_fdata = "no_lbr";
  if (meta.contains("bolt_fdata")) bolt_fdata = meta_text(dir, meta, "bolt_fdata");
  if (bolt_fdata != "branch" && bolt_fdata != "no_lbr") {
    throw OutputError(meta_path, "'bolt_fdata' is '" + bolt_fdata + "', neither branch nor no_lbr");
  }

  if (bolt_fdata == "branch") {
    out.branch_fdata = read_parsed(dir, "bolt.fdata", [](const std::string& t, std::string* e) {
      return parse_branch_fdata(t, e);
    });
    out.no_lbr = read_parsed(dir, "bolt.nolbr.fdata", parse_no_lbr_fdata);
  } else {
    out.no_lbr = read_parsed(dir, "bolt.fdata", parse_no_lbr_fdata);
    if (dir.has_entry("bolt.nolbr.fdata")) {
      throw OutputError(dir.path_of("bolt.nolbr.fdata"), "present although meta.json says bolt.fdata is no_lbr");
    }
  }
  out.preagg = read_parsed(dir, "bolt.preagg", [](const std::string& t, std::string* e) { return parse_preagg(t, e); });
  out.autofdo = read_parsed(dir, "autofdo.prof", [](const std::string& t, std::string* e) {
    return parse_sample_profile_text(t, e);
  });
  out.ips = read_parsed(dir, "samples.ip", [](const std::string& t, std::string* e) { return parse_ip_samples(t, e); });
  out.branches = read_parsed(dir, "samples.branch", parse_branch_samples);

  for (const std::string& entry : dir.entries()) {
    if (std::find(std::begin(kKnownFiles), std::end(kKnownFiles), entry) != std::end(kKnownFiles)) continue;
    if (is_set_aside(entry)) {
      out.left_out.push_back(dir.path_of(entry) + ": set aside by an earlier run as unreadable; not merged");
    } else if (entry.starts_with(".")) {
      continue;  // a write in progress or left by a killed run
    } else if (entry == "autofdo.unsym") {
      out.left_out.push_back(dir.path_of(entry) + ": unsymbolized profiles are not merged");
    } else {
      out.left_out.push_back(dir.path_of(entry) + ": not a profile file; not merged");
    }
  }
  return out;
}

}  // namespace profcollect
