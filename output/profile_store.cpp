#include "output/profile_store.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "output/atomic_file.h"
#include "output/ip_samples_file.h"
#include "output/profile_generation.h"
#include "output/json_text.h"

namespace profcollect {

namespace fs = std::filesystem;

namespace {

// A field of an earlier run's meta.json, or the default when it is missing or of another type:
// json::value() would throw for a damaged file, and a damaged file must only cost its counts.
uint64_t meta_number(const nlohmann::json& meta, const char* key) {
  auto it = meta.find(key);
  return it != meta.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}
std::string meta_text(const nlohmann::json& meta, const char* key) {
  auto it = meta.find(key);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

ProfileStore::ProfileStore(std::string dir, GenerationModes modes)
    : dir_(std::move(dir)), root_(DirectoryHandle::open_path(dir_, modes.directory)), modes_(modes) {
  // Known now, not after the workload ran: a file can be created in the directory.
  const std::string probe = temporary_name(".profcollect-probe.tmp-");
  const int fd = ::openat(root_.fd(), probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, modes_.file);
  if (fd < 0) throw OutputError(dir_, std::string("cannot create files in it: ") + std::strerror(errno));
  ::close(fd);
  root_.remove_tree(probe);
  for (std::string& done : remove_leftover_generations(root_)) warnings_.push_back(std::move(done));
}

std::vector<std::string> ProfileStore::take_warnings() {
  std::vector<std::string> w;
  w.swap(warnings_);
  return w;
}

const ProfileStore::Base& ProfileStore::base_for(const std::string& name) {
  auto it = bases_.find(name);
  if (it != bases_.end()) return it->second;
  Base base;
  std::optional<DirectoryHandle> current = root_.open_subdirectory(name);  // refuses links, others' entries
  if (!current) return bases_.emplace(name, std::move(base)).first->second;

  // What is wrong with the earlier run's files, if anything: then none of them is added to.
  std::string damage;
  // A file that cannot be read as ours (a symbolic link planted under its name, another user's
  // file, a FIFO) is damage too: it is set aside with the rest, never followed or added to.
  auto read = [&](const std::string& file) -> std::optional<std::string> {
    try {
      return current->read_file(file);
    } catch (const OutputError& e) {
      damage = e.what();
      return std::nullopt;
    }
  };
  nlohmann::json meta;
  if (auto text = read("meta.json")) {
    meta = nlohmann::json::parse(*text, nullptr, false);
    if (!meta.is_object()) damage = current->path_of("meta.json") + ": not a JSON object";
  }
  // With branch samples, bolt.fdata is branch fdata (remade from samples.branch) and the IP
  // samples' no_lbr profile is bolt.nolbr.fdata.
  base.branch_fdata = meta.is_object() && meta_text(meta, "bolt_fdata") == "branch";
  const std::string fdata_name = base.branch_fdata ? "bolt.nolbr.fdata" : "bolt.fdata";
  if (damage.empty()) {
    if (auto text = read("samples.ip")) {
      std::string error;
      if (auto parsed = parse_ip_samples(*text, &error)) {
        base.ips = std::move(*parsed);
      } else {
        damage = current->path_of("samples.ip") + ": " + error;
      }
    }
  }
  if (damage.empty()) {
    if (auto text = read("samples.branch")) {
      std::string error;
      if (auto parsed = parse_branch_samples(*text, &error)) {
        base.branches = std::move(*parsed);
      } else {
        damage = current->path_of("samples.branch") + ": " + error;
      }
    }
  }
  if (damage.empty()) {
    if (auto text = read(fdata_name)) {
      std::string error;
      if (auto parsed = parse_no_lbr_fdata(*text, &error)) {
        base.fdata = std::move(*parsed);
      } else {
        damage = current->path_of(fdata_name) + ": " + error;
      }
    }
  }
  if (!damage.empty()) {
    // Never added to, never dropped: the whole earlier generation is set aside, so that the
    // directory's files keep counting the same samples, and the profiles restart from this run.
    const std::string suffix = ".unreadable-" + std::to_string(std::time(nullptr));
    for (const std::string& entry : current->entries()) {
      if (!is_set_aside(entry) && !entry.starts_with(".")) current->rename_entry(entry, entry + suffix);
    }
    current->sync();
    warnings_.push_back(damage + "; the directory's earlier files were set aside as *" + suffix +
                        " and its profiles restart from this run");
    return bases_.emplace(name, Base()).first->second;
  }
  if (meta.is_object()) {
    base.samples = meta_number(meta, "samples");
    base.first_sample_ns = meta_number(meta, "first_sample_ns");
    base.last_sample_ns = meta_number(meta, "last_sample_ns");
  }
  if (base.samples < base.fdata.total()) base.samples = base.fdata.total();
  return bases_.emplace(name, std::move(base)).first->second;
}

void ProfileStore::write_binary(const BinaryProfileSnapshot& s) {
  const std::string name = s.identity.directory_name();
  const std::string subdir = root_.path_of(name);
  const Base& base = base_for(name);
  NoLbrFdata merged = base.fdata;
  if (merged.events.empty() || !s.fdata.events.empty()) merged.events = s.fdata.events;
  for (const auto& [key, count] : s.fdata.counts) merged.counts[key] += count;
  uint64_t first = base.first_sample_ns;
  if (first == 0 || (s.first_sample_ns != 0 && s.first_sample_ns < first)) first = s.first_sample_ns;
  // Branch samples from this run or an earlier one make this a branch profile.
  const bool branch_mode = s.branches != nullptr || !base.branches.empty();
  BranchSamples branches;
  if (branch_mode) {
    branches = base.branches;
    if (s.branches) branches.merge(*s.branches);
  }
  if (branch_mode && !s.render) {
    throw OutputError(subdir + "/bolt.fdata", "branch samples given without a way to write them");
  }
  IpProfile ips = base.ips;
  ips.merge(s.ips);
  // Every file is made before the first is written: a failure while making them (the AutoFDO
  // and BOLT writers decode the binary) leaves the directory as the last flush left it, never
  // with new profiles and an old or missing meta.json.
  const ImageCounts counts{ips, merged, branch_mode ? &branches : nullptr};
  RenderedProfiles rendered;
  if (s.render) {
    rendered = s.render(counts);
  } else {
    rendered.files.emplace_back("bolt.fdata", format_no_lbr_fdata(merged));
  }
  // With branch samples bolt.fdata is made from them, and the IP samples' no_lbr profile is
  // kept beside it so that runs add up.
  rendered.branch_fdata = branch_mode;
  std::vector<std::pair<std::string, std::string>> files;
  if (branch_mode) files.emplace_back("bolt.nolbr.fdata", format_no_lbr_fdata(merged));
  files.emplace_back("samples.ip", format_ip_samples(ips));
  if (branch_mode) files.emplace_back("samples.branch", format_branch_samples(branches));
  for (auto& file : rendered.files) files.push_back(file);
  ImageMeta meta;
  meta.samples = base.samples + s.samples;
  meta.first_sample_ns = first;
  meta.last_sample_ns = std::max(base.last_sample_ns, s.last_sample_ns);
  meta.events = s.events;
  if (meta.events.empty() && !s.event.empty()) meta.events = {s.event};
  if (branch_mode) meta.branch_stacks = branches.stacks;
  files.emplace_back("meta.json", render_meta(s.identity, meta, rendered));
  write_generation(root_, name, files, modes_);
}

void ProfileStore::write_collection(const std::string& name, const nlohmann::ordered_json& summary) {
  root_.replace_file(name, json_text(summary) + "\n", modes_.file);
}

}  // namespace profcollect
