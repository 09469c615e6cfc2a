#include "output/profile_directory.h"

#include <algorithm>
#include <ctime>
#include <functional>

#include "output/ip_samples_file.h"
#include "output/profile_format.h"

namespace profcollect {

namespace {

// The count files a flush writes beside the formats' (the profile store adds to them).
constexpr const char* kCountFiles[] = {"bolt.nolbr.fdata", "samples.ip", "samples.branch"};

// The files the codec reads, in the order it reads them: the registered formats' that say how
// they are totalled, then the count files.
const std::vector<std::string>& profile_files() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> out;
    for (ProfileFormat f : profile_formats()) {
      if (f->total) out.emplace_back(f->file);
    }
    out.insert(out.end(), std::begin(kCountFiles), std::end(kCountFiles));
    return out;
  }();
  return files;
}

bool is_profile_file(const std::string& name) {
  return name == "meta.json" ||
         std::find(profile_files().begin(), profile_files().end(), name) != profile_files().end();
}

// The format whose file `name` is, whether the codec reads it or not.
ProfileFormat format_with_file(const std::string& name) {
  for (ProfileFormat f : profile_formats()) {
    if (f->file == name || (!f->companion_file.empty() && f->companion_file == name)) return f;
  }
  return nullptr;
}

// The format whose file `name` is, when the codec reads it.
ProfileFormat format_of_file(const std::string& name) {
  for (ProfileFormat f : profile_formats()) {
    if (f->file == name && f->total) return f;
  }
  return nullptr;
}

// Parses `text` as the file `name` into `into` and returns the sum of its counts (the header's
// rule); nullopt with `why` when it is not such a file. A format's file is totalled by its
// registry entry and kept as text for merge; the counts (the no_lbr profile, samples.*) are
// read into `into`.
std::optional<uint64_t> decode_file(const std::string& name, const std::string& text,
                                    bool branch_fdata, ProfileDirectory& into, std::string* why) {
  if (!text.empty() && text.back() != '\n') {
    *why = "cut mid-line: its last line has no newline";
    return std::nullopt;
  }
  CheckedSum sum;
  if ((name == "bolt.fdata" && !branch_fdata) || name == "bolt.nolbr.fdata") {
    auto parsed = parse_no_lbr_fdata(text, why);
    if (!parsed) return std::nullopt;
    for (const auto& [key, count] : parsed->counts) sum.add(count);
    into.counts.no_lbr = std::move(*parsed);
    into.no_lbr_file = name;
  } else if (ProfileFormat format = format_of_file(name)) {
    if (name == "bolt.fdata" && is_no_lbr_fdata(text)) {
      *why = "no_lbr fdata where meta.json says bolt.fdata is branch fdata";
      return std::nullopt;
    }
    const std::optional<uint64_t> total = format->total(text, why);
    if (!total) return std::nullopt;
    into.format_files[name] = text;
    return total;
  } else if (name == "samples.ip") {
    auto parsed = parse_ip_samples(text, why);
    if (!parsed) return std::nullopt;
    for (const auto& [address, count] : parsed->counts()) sum.add(count);
    into.counts.ips = std::move(*parsed);
  } else if (name == "samples.branch") {
    auto parsed = parse_branch_samples(text, why);
    if (!parsed) return std::nullopt;
    sum.add(parsed->stacks);
    for (const auto& [branch, counts] : parsed->bolt.branches()) {
      sum.add(counts.count);
      sum.add(counts.mispredicts);
    }
    for (const auto& [range, count] : parsed->bolt.fall_throughs()) sum.add(count);
    for (const auto& [range, count] : parsed->ranges.ranges) sum.add(count);
    for (const auto& [branch, count] : parsed->ranges.branches) sum.add(count);
    into.counts.branches = std::move(*parsed);
  } else {
    *why = "not a profile file";
    return std::nullopt;
  }
  if (sum.overflow) {
    *why = "its counts add up past 2^64";
    return std::nullopt;
  }
  return sum.value;
}

// Whether the directory name `name` carries the build-id `build_id` (hex; empty: none):
// <basename>-<build-id>, or <basename>-nobuildid[-<hash>] for none.
bool name_carries_build_id(const std::string& name, const std::string& build_id) {
  if (build_id.empty()) return name.find("-nobuildid") != std::string::npos;
  return name.size() > build_id.size() && name.ends_with("-" + build_id);
}

std::string directory_name_of(const DirectoryHandle& dir) {
  const std::string& path = dir.path();
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The faults of one directory as the strictness wants them: Merge throws the first.
class FaultList {
 public:
  FaultList(const DirectoryHandle& dir, DirectoryStrictness strictness)
      : dir_(dir), strictness_(strictness) {}
  void add(const std::string& name, const std::string& reason) {
    if (strictness_ == DirectoryStrictness::Merge) throw OutputError(dir_.path_of(name), reason);
    faults_.push_back({dir_.path_of(name), reason});
  }
  // The file `name`, nullopt when absent; a file that cannot be read as ours (a link, another
  // user's, not a regular file) is a fault.
  std::optional<std::string> read(const std::string& name) {
    try {
      return dir_.read_file(name);
    } catch (const OutputError& e) {
      if (strictness_ == DirectoryStrictness::Merge) throw;
      const std::string what = e.what();
      const std::string prefix = e.path() + ": ";
      faults_.push_back({e.path(), what.starts_with(prefix) ? what.substr(prefix.size()) : what});
      return std::nullopt;
    }
  }
  std::vector<DirectoryFault>& faults() { return faults_; }

 private:
  const DirectoryHandle& dir_;
  DirectoryStrictness strictness_;
  std::vector<DirectoryFault> faults_;
};

// Store: every entry of a damaged directory is renamed *.unreadable-<time> (hidden ones, a write
// in progress, and those already set aside left alone) and the renames made durable.
void set_aside_entries(const DirectoryHandle& dir) {
  const std::string suffix = ".unreadable-" + std::to_string(std::time(nullptr));
  for (const std::string& entry : dir.entries()) {
    if (!is_set_aside(entry) && !entry.starts_with(".")) dir.rename_entry(entry, entry + suffix);
  }
  dir.sync();
}

// A count field of meta.json: nullopt when absent; a fault when not a whole number.
std::optional<uint64_t> meta_count(const nlohmann::json& meta, const char* key, FaultList& faults) {
  auto it = meta.find(key);
  if (it == meta.end()) return std::nullopt;
  if (!it->is_number_unsigned()) {
    faults.add("meta.json", std::string("'") + key + "' is not a whole number");
    return std::nullopt;
  }
  return it->get<uint64_t>();
}

std::string meta_string(const nlohmann::json& meta, const char* key, FaultList& faults) {
  auto it = meta.find(key);
  if (it == meta.end() || !it->is_string()) {
    faults.add("meta.json", std::string("'") + key + "' is missing or not a string");
    return {};
  }
  return it->get<std::string>();
}

// The build-id meta.json gives, checked as a build-id and against the directory's name.
void read_build_id(const DirectoryHandle& dir, const nlohmann::json& meta, FaultList& faults,
                   BuildId* out) {
  const std::string build_id = meta_string(meta, "build_id", faults);
  if (!build_id.empty()) {
    auto parsed = BuildId::from_hex(build_id);
    if (!parsed) {
      faults.add("meta.json", "'build_id' is not a build-id: '" + build_id + "'");
      return;
    }
    if (out) *out = *parsed;
  }
  const std::string name = directory_name_of(dir);
  if (!name_carries_build_id(name, build_id)) {
    faults.add("meta.json", "build-id " + (build_id.empty() ? std::string("none") : build_id) +
                                " is not the directory name's (" + name +
                                "): not this directory's binary");
  }
}

// meta.json's fields into `out`; `totals` gets file_totals, `formats` the files it lists.
void read_meta(const DirectoryHandle& dir, const nlohmann::json& meta, FaultList& faults,
               ProfileDirectory& out, std::map<std::string, uint64_t>& totals,
               std::vector<std::string>& formats, bool& branch) {
  out.identity.path = meta_string(meta, "path", faults);
  read_build_id(dir, meta, faults, &out.identity.build_id);
  if (auto samples = meta_count(meta, "samples", faults)) {
    out.samples = *samples;
  } else if (!meta.contains("samples")) {
    faults.add("meta.json", "'samples' is missing");
  }
  out.first_sample_ns = meta_count(meta, "first_sample_ns", faults).value_or(0);
  out.last_sample_ns = meta_count(meta, "last_sample_ns", faults).value_or(0);
  out.branch_stacks = meta_count(meta, "branch_stacks", faults);
  if (auto it = meta.find("events"); it != meta.end()) {
    if (!it->is_array()) {
      faults.add("meta.json", "'events' is not a list");
    } else {
      for (const auto& event : *it) {
        if (!event.is_string()) {
          faults.add("meta.json", "'events' holds something other than a name");
          break;
        }
        out.events.push_back(event.get<std::string>());
      }
    }
  }
  if (out.events.empty()) {
    if (auto it = meta.find("event");
        it != meta.end() && it->is_string() && !it->get<std::string>().empty()) {
      out.events.push_back(it->get<std::string>());
    }
  }
  if (meta.contains("bolt_fdata")) {
    const std::string bolt_fdata = meta_string(meta, "bolt_fdata", faults);
    if (bolt_fdata != "branch" && bolt_fdata != "no_lbr") {
      faults.add("meta.json", "'bolt_fdata' is '" + bolt_fdata + "', neither branch nor no_lbr");
    }
    branch = bolt_fdata == "branch";
  }
  if (auto it = meta.find("formats"); it != meta.end()) {
    if (!it->is_array()) {
      faults.add("meta.json", "'formats' is not a list");
    } else {
      for (const auto& f : *it) {
        if (f.is_string()) formats.push_back(f.get<std::string>());
      }
    }
  }
  if (auto it = meta.find("file_totals"); it != meta.end()) {
    if (!it->is_object()) {
      faults.add("meta.json", "'file_totals' is not an object");
    } else {
      for (const auto& [name, total] : it->items()) {
        if (!total.is_number_unsigned()) {
          faults.add("meta.json", "file_totals." + name + " is not a whole number");
        } else {
          totals[name] = total.get<uint64_t>();
        }
      }
    }
  }
}

}  // namespace

std::string set_aside_warning(const std::vector<DirectoryFault>& faults) {
  std::string out;
  for (const DirectoryFault& f : faults) out += (out.empty() ? "" : "; ") + f.text();
  return out +
         "; the directory's earlier files were set aside as *.unreadable-<time> and its profiles "
         "restart "
         "from this run";
}

ProfileDirectory read_profile_directory(const DirectoryHandle& dir,
                                        DirectoryStrictness strictness) {
  ProfileDirectory out;
  out.path = dir.path();
  const std::vector<std::string> entries = dir.entries();
  for (const std::string& entry : entries) {
    if (is_set_aside(entry)) {
      out.set_aside.push_back(entry);
      out.left_out.push_back(dir.path_of(entry) +
                             ": set aside by an earlier run as unreadable; not read");
    } else if (entry.starts_with(".") || is_profile_file(entry)) {
      continue;  // hidden: a write in progress or left by a killed run
    } else if (ProfileFormat f = format_with_file(entry); f && f->merge_renders) {
      out.rendered_again.push_back(f);
    } else if (ProfileFormat f = format_with_file(entry)) {
      out.left_out.push_back(dir.path_of(entry) + ": " + std::string(f->name) +
                             " profiles are not merged");
    } else {
      out.left_out.push_back(dir.path_of(entry) + ": not a profile file; not read");
    }
  }
  std::sort(out.set_aside.begin(), out.set_aside.end());
  const bool empty = std::none_of(entries.begin(), entries.end(), [](const std::string& e) {
    return !e.starts_with(".") && !is_set_aside(e);
  });
  // The store made this directory and was stopped before its first generation: nothing to add.
  if (empty && strictness == DirectoryStrictness::Store) return out;

  FaultList faults(dir, strictness);
  std::map<std::string, uint64_t> totals;  // meta.json's file_totals
  std::vector<std::string> formats;        // meta.json's formats
  bool branch = false;                     // bolt.fdata is branch fdata
  if (std::optional<std::string> text = faults.read("meta.json")) {
    nlohmann::json meta = nlohmann::json::parse(*text, nullptr, false);
    if (!meta.is_object()) {
      faults.add("meta.json", "not a JSON object");
    } else {
      read_meta(dir, meta, faults, out, totals, formats, branch);
      out.meta = std::move(meta);
    }
  } else if (!dir.has_entry("meta.json")) {
    faults.add("meta.json", "missing: not a profcollect binary profile directory");
  }

  for (const std::string& name : profile_files()) {
    std::optional<std::string> text = faults.read(name);
    const auto recorded = totals.find(name);
    if (!text) {
      if (!dir.has_entry(name) && recorded != totals.end()) {
        faults.add(name, "missing, though meta.json's file_totals counts it");
      }
      continue;
    }
    std::string why;
    std::optional<uint64_t> total = decode_file(name, *text, branch, out, &why);
    if (!total) {
      faults.add(name, why);
      continue;
    }
    out.totals[name] = *total;
    if (recorded != totals.end() && recorded->second != *total) {
      faults.add(name, "counts " + std::to_string(*total) + " where meta.json's file_totals says " +
                           std::to_string(recorded->second) +
                           ": truncated or changed since it was written");
    }
  }
  for (const std::string& name : formats) {
    if (!dir.has_entry(name)) faults.add(name, "missing, though meta.json's formats lists it");
  }
  if (!branch && dir.has_entry("bolt.fdata") && dir.has_entry("bolt.nolbr.fdata")) {
    faults.add("bolt.nolbr.fdata",
               "present although meta.json says bolt.fdata is no_lbr: two no_lbr profiles");
  }
  // What holds of directories written before file_totals too.
  if (!out.no_lbr_file.empty() && out.meta.is_object() &&
      out.totals[out.no_lbr_file] > out.samples) {
    faults.add(out.no_lbr_file, "counts " + std::to_string(out.totals[out.no_lbr_file]) +
                                    " samples, more than meta.json's samples (" +
                                    std::to_string(out.samples) + ")");
  }
  if (out.counts.branches && out.branch_stacks &&
      out.counts.branches->stacks != *out.branch_stacks) {
    faults.add("samples.branch", "counts " + std::to_string(out.counts.branches->stacks) +
                                     " branch stacks where meta.json's branch_stacks says " +
                                     std::to_string(*out.branch_stacks));
  }

  if (strictness == DirectoryStrictness::Store && !faults.faults().empty()) {
    // Never added to, never dropped: the whole earlier generation is set aside, so that the
    // directory's files keep counting the same samples.
    set_aside_entries(dir);
    ProfileDirectory damaged;
    damaged.path = dir.path();
    damaged.faults = std::move(faults.faults());
    return damaged;
  }
  out.faults = std::move(faults.faults());
  return out;
}

KallsymsDirectory read_kallsyms_directory(const DirectoryHandle& dir,
                                          DirectoryStrictness strictness) {
  KallsymsDirectory out;
  FaultList faults(dir, strictness);
  const char* const names[] = {"samples.ip", "functions.txt", "meta.json"};
  std::optional<std::string> texts[3];
  for (size_t i = 0; i < 3; ++i) {
    texts[i] = faults.read(names[i]);
    if (!texts[i] && !dir.has_entry(names[i])) faults.add(names[i], "missing");
  }
  if (texts[0] && texts[1] && texts[2]) {
    const nlohmann::json meta = nlohmann::json::parse(*texts[2], nullptr, false);
    if (meta.is_object()) read_build_id(dir, meta, faults, nullptr);
    std::string why;
    out.profile = parse_kallsyms_profile(*texts[0], *texts[1], *texts[2], &why);
    if (!out.profile) {
      // parse_kallsyms_profile's reasons begin with the file they are about.
      std::string file = "meta.json";
      for (const char* name : names) {
        if (why.starts_with(name)) file = name;
      }
      if (why.starts_with(file + ": ")) why = why.substr(file.size() + 2);
      faults.add(file, why);
    }
  }
  if (!faults.faults().empty()) {
    out.profile.reset();
    if (strictness == DirectoryStrictness::Store) set_aside_entries(dir);
  }
  out.faults = std::move(faults.faults());
  return out;
}

std::vector<std::pair<std::string, uint64_t>> file_totals_of(
    const std::vector<std::pair<std::string, std::string>>& files, bool branch_fdata,
    const std::string& where) {
  // Counted from the very text written, with the reader's rule.
  std::vector<std::pair<std::string, uint64_t>> totals;
  ProfileDirectory scratch;
  for (const auto& [file, content] : files) {
    if (!is_profile_file(file) || file == "meta.json") continue;
    std::string why;
    const std::optional<uint64_t> total = decode_file(file, content, branch_fdata, scratch, &why);
    if (!total) throw OutputError(where + "/" + file, "made unreadable (" + why + "): not written");
    totals.emplace_back(file, *total);
  }
  return totals;
}

BoltFdataKind bolt_fdata_of(const RenderedProfiles& rendered) {
  for (const auto& [file, content] : rendered.files) {
    if (file == "bolt.fdata")
      return rendered.branch_fdata ? BoltFdataKind::Branch : BoltFdataKind::NoLbr;
  }
  return BoltFdataKind::None;
}

std::vector<std::pair<std::string, std::string>> count_files(const ImageCounts& counts,
                                                             BoltFdataKind bolt_fdata) {
  std::vector<std::pair<std::string, std::string>> files;
  const bool no_lbr = !counts.no_lbr.events.empty() || !counts.no_lbr.counts.empty();
  if (no_lbr && (bolt_fdata == BoltFdataKind::Branch ||
                 (bolt_fdata == BoltFdataKind::None && counts.branches)))
    files.emplace_back("bolt.nolbr.fdata", format_no_lbr_fdata(counts.no_lbr));
  if (!counts.ips.empty()) files.emplace_back("samples.ip", format_ip_samples(counts.ips));
  if (counts.branches)
    files.emplace_back("samples.branch", format_branch_samples(*counts.branches));
  return files;
}

void write_profile_directory(const DirectoryHandle& parent, const std::string& name,
                             std::vector<std::pair<std::string, std::string>> files,
                             const BinaryIdentity& identity, ImageMeta meta,
                             const RenderedProfiles& rendered, GenerationModes modes) {
  meta.file_totals = file_totals_of(files, rendered.branch_fdata, parent.path_of(name));
  files.emplace_back("meta.json", render_meta(identity, meta, rendered));
  write_generation(parent, name, files, modes);
}

}  // namespace profcollect
