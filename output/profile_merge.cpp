#include "output/profile_merge.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "output/autofdo_writer.h"
#include "output/binary_directory_reader.h"
#include "output/directory_handle.h"
#include "output/ip_samples_file.h"
#include "output/preagg_writer.h"
#include "output/profile_renderer.h"
#include "output/sample_profile_reader.h"

namespace profcollect {

namespace {

// The sum of one binary's directories so far.
struct MergedBinary {
  std::string first_path;  // the first input's directory, for messages
  BinaryIdentity identity;
  uint64_t samples = 0;
  uint64_t first_sample_ns = 0, last_sample_ns = 0;
  std::vector<std::string> events;
  std::optional<uint64_t> branch_stacks;
  std::optional<NoLbrFdata> no_lbr;
  std::optional<BranchFdata> branch_fdata;
  std::optional<BranchProfile> preagg;
  std::optional<SampleProfile> autofdo;
  std::optional<IpProfile> ips;
  std::optional<BranchSamples> branches;
};

void add_events(std::vector<std::string>& into, const std::vector<std::string>& events) {
  for (const std::string& e : events) {
    if (std::find(into.begin(), into.end(), e) == into.end()) into.push_back(e);
  }
}

void add_no_lbr(std::optional<NoLbrFdata>& into, const NoLbrFdata& from) {
  if (!into) into.emplace();
  add_events(into->events, from.events);
  for (const auto& [key, count] : from.counts) into->counts[key] += count;
}

void add_branch_fdata(std::optional<BranchFdata>& into, const BranchFdata& from) {
  if (!into) into.emplace();
  for (const auto& [ends, counts] : from) {
    FdataBranchCounts& sum = (*into)[ends];
    sum.count += counts.count;
    sum.mispredicts += counts.mispredicts;
  }
}

void add_preagg(std::optional<BranchProfile>& into, const BranchProfile& from) {
  if (!into) into.emplace();
  for (const auto& [branch, counts] : from.branches()) into->add_branch(branch, counts.count, counts.mispredicts);
  for (const auto& [range, count] : from.fall_throughs()) into->add_fall_through(range, count);
}

void add_autofdo(std::optional<SampleProfile>& into, const SampleProfile& from) {
  if (!into) into.emplace();
  for (const auto& [name, samples] : from) add_function_samples((*into)[name], samples);
}

void add_directory(MergedBinary& m, const BinaryDirectoryFiles& d, bool first) {
  if (first) {
    m.first_path = d.path;
    m.identity = d.identity;
  } else if (m.identity.build_id != d.identity.build_id) {
    throw OutputError(d.path + "/meta.json",
                      "build-id " + (d.identity.build_id.empty() ? std::string("none") : d.identity.build_id.to_hex()) +
                          " differs from " + m.first_path + "/meta.json's " +
                          (m.identity.build_id.empty() ? std::string("none") : m.identity.build_id.to_hex()) +
                          ": not the same binary");
  }
  m.samples += d.samples;
  if (d.first_sample_ns != 0 && (m.first_sample_ns == 0 || d.first_sample_ns < m.first_sample_ns)) {
    m.first_sample_ns = d.first_sample_ns;
  }
  m.last_sample_ns = std::max(m.last_sample_ns, d.last_sample_ns);
  add_events(m.events, d.events);
  if (d.branch_stacks) m.branch_stacks = m.branch_stacks.value_or(0) + *d.branch_stacks;
  if (d.no_lbr) add_no_lbr(m.no_lbr, *d.no_lbr);
  if (d.branch_fdata) add_branch_fdata(m.branch_fdata, *d.branch_fdata);
  if (d.preagg) add_preagg(m.preagg, *d.preagg);
  if (d.autofdo) add_autofdo(m.autofdo, *d.autofdo);
  if (d.ips) {
    if (!m.ips) m.ips.emplace();
    m.ips->merge(*d.ips);
  }
  if (d.branches) {
    if (!m.branches) m.branches.emplace();
    m.branches->merge(*d.branches);
  }
}

// The files of the merged directory, meta.json last, in the profile store's order.
std::vector<std::pair<std::string, std::string>> files_of(const MergedBinary& m) {
  RenderedProfiles rendered;  // the profile files meta.json lists
  rendered.branch_fdata = m.branch_fdata.has_value();
  if (m.branch_fdata) {
    rendered.files.emplace_back("bolt.fdata", FdataBranchWriter::format(*m.branch_fdata));
  } else if (m.no_lbr) {
    rendered.files.emplace_back("bolt.fdata", format_no_lbr_fdata(*m.no_lbr));
  }
  if (m.preagg) rendered.files.emplace_back("bolt.preagg", PreaggWriter::write(*m.preagg));
  if (m.autofdo) rendered.files.emplace_back("autofdo.prof", write_sample_profile_text(*m.autofdo));

  std::vector<std::pair<std::string, std::string>> files;
  if (m.branch_fdata && m.no_lbr) files.emplace_back("bolt.nolbr.fdata", format_no_lbr_fdata(*m.no_lbr));
  if (m.ips) files.emplace_back("samples.ip", format_ip_samples(*m.ips));
  if (m.branches) files.emplace_back("samples.branch", format_branch_samples(*m.branches));
  files.insert(files.end(), rendered.files.begin(), rendered.files.end());
  ImageMeta meta;
  meta.samples = m.samples;
  meta.first_sample_ns = m.first_sample_ns;
  meta.last_sample_ns = m.last_sample_ns;
  meta.events = m.events;
  meta.branch_stacks = m.branch_stacks;
  files.emplace_back("meta.json", render_meta(m.identity, meta, rendered));
  return files;
}

// An input given must exist and be a directory (DirectoryHandle::open_path would create it),
// and be given once: the same host's counts added twice would weigh it double.
DirectoryHandle open_input(const std::string& path, std::set<std::pair<dev_t, ino_t>>& seen) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw OutputError(path, "no such directory");
  if (!S_ISDIR(st.st_mode)) throw OutputError(path, "not a directory: not a profcollect output directory");
  if (!seen.emplace(st.st_dev, st.st_ino).second) throw OutputError(path, "given twice: its counts would be added twice");
  return DirectoryHandle::open_path(path, 0700);
}

}  // namespace

MergeSummary merge_profile_directories(const std::vector<std::string>& inputs, const std::string& output,
                                       GenerationModes modes) {
  MergeSummary summary;
  std::map<std::string, MergedBinary> merged;  // by directory name: basename + build-id
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const std::string& input : inputs) {
    const DirectoryHandle root = open_input(input, seen);
    bool is_output = false;
    for (const std::string& entry : root.entries()) {
      // Hidden entries are generations being written or left by a killed run.
      if (entry.starts_with(".")) continue;
      if (entry == "collection.json") {
        is_output = true;  // describes that run only: not merged
        continue;
      }
      std::optional<DirectoryHandle> directory = root.open_subdirectory(entry);  // refuses links, files
      if (!directory) continue;  // gone meanwhile
      const BinaryDirectoryFiles files = read_binary_directory(*directory);
      for (const std::string& note : files.left_out) summary.warnings.push_back(note);
      auto [it, first] = merged.try_emplace(entry);
      add_directory(it->second, files, first);
      is_output = true;
    }
    if (!is_output) {
      throw OutputError(input, "holds no profcollect output (no collection.json, no <binary>-<build-id>/ directories)");
    }
  }

  // Everything made before the first write.
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> directories;
  for (const auto& [name, binary] : merged) directories.emplace_back(name, files_of(binary));
  const DirectoryHandle out = DirectoryHandle::open_path(output, modes.directory);
  for (std::string& done : remove_leftover_generations(out)) summary.warnings.push_back(std::move(done));
  for (const auto& [name, files] : directories) {
    write_generation(out, name, files, modes);
    summary.binaries.push_back(name);
  }
  return summary;
}

}  // namespace profcollect
