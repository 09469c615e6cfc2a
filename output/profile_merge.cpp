#include "output/profile_merge.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "output/directory_handle.h"
#include "output/profile_directory.h"
#include "output/profile_format.h"
#include "output/profile_renderer.h"

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
  ImageCounts counts;
  bool no_lbr = false;  // an input had a no_lbr profile
  // The registered formats' files (bolt.fdata when branch fdata), each summed by its merger.
  std::map<std::string, std::unique_ptr<FormatMerger>> formats;
  // Each file's total so far: while these stay below 2^64, no sum of the files' counts, each at
  // most its file's total, can wrap.
  std::map<std::string, uint64_t> totals;
  // The build-ids of the BOLTed binaries whose translated profiles were added (see below).
  std::set<std::string> bolted_build_ids;
  // Formats an input had that are rendered again from the summed counts (merge_renders).
  std::set<ProfileFormat> rendered_again;
};

// A directory of a BOLTed binary whose profiles BAT translated holds the input binary's
// profiles (meta.json's bolt_address_translation, output/profile_renderer.h): its build-id is the
// input's, and only the files made in the input's terms are added -- the BOLT profiles and
// AutoFDO (source lines); its samples files and bolt.preagg are in the BOLTed layout.
std::optional<BuildId> translated_input(const ProfileDirectory& d) {
  if (!d.meta.is_object() || !d.meta.contains("bolt_address_translation")) return std::nullopt;
  const nlohmann::json& bat = d.meta["bolt_address_translation"];
  if (!bat.is_object() || bat.value("status", std::string()) != "translated") return std::nullopt;
  const std::string id = bat.value("input_build_id", std::string());
  std::optional<BuildId> input = BuildId::from_hex(id);
  if (!input || input->empty()) {
    throw OutputError(d.path + "/meta.json",
                      "bolt_address_translation's input_build_id '" + id + "' is not a build-id");
  }
  return input;
}

bool kept_when_translated(const std::string& file) {
  return file == "bolt.fdata" || file == "bolt.nolbr.fdata" || file == "autofdo.prof";
}

// The BOLTed build-ids a directory's profiles came through (a merge's output says them).
void add_bolted_build_ids(MergedBinary& m, const ProfileDirectory& d) {
  if (!d.meta.is_object() || !d.meta.contains("bolt_address_translation")) return;
  const nlohmann::json& bat = d.meta["bolt_address_translation"];
  if (!bat.is_object() || !bat.contains("bolted_build_ids") || !bat["bolted_build_ids"].is_array())
    return;
  for (const auto& id : bat["bolted_build_ids"]) {
    if (id.is_string()) m.bolted_build_ids.insert(id.get<std::string>());
  }
}

void add_events(std::vector<std::string>& into, const std::vector<std::string>& events) {
  for (const std::string& e : events) {
    if (std::find(into.begin(), into.end(), e) == into.end()) into.push_back(e);
  }
}

// `into` + `more`, or an OutputError naming `file`: a sum past 2^64 is never wrapped.
void add_checked(uint64_t& into, uint64_t more, const std::string& file, const char* what) {
  if (!add_count(into, more)) {
    throw OutputError(
        file, std::string(what) + " add up past 2^64 with the inputs before it: not merged");
  }
}

// `translated`: d is a BOLTed binary's translated profile, added to its input binary's.
void add_directory(MergedBinary& m, const ProfileDirectory& d, bool first,
                   const std::optional<BuildId>& translated = std::nullopt) {
  if (translated) {
    if (first) {
      m.first_path = d.path;
      m.identity = {d.identity.path, *translated};
    }
    m.bolted_build_ids.insert(d.identity.build_id.to_hex());
  } else if (first) {
    m.first_path = d.path;
    m.identity = d.identity;
  } else if (m.identity.build_id != d.identity.build_id) {
    throw OutputError(
        d.path + "/meta.json",
        "build-id " +
            (d.identity.build_id.empty() ? std::string("none") : d.identity.build_id.to_hex()) +
            " differs from " + m.first_path + "/meta.json's " +
            (m.identity.build_id.empty() ? std::string("none") : m.identity.build_id.to_hex()) +
            ": not the same binary");
  }
  // Checked before anything is added.
  const std::string meta = d.path + "/meta.json";
  uint64_t samples = m.samples;
  add_checked(samples, d.samples, meta, "its samples");
  std::optional<uint64_t> branch_stacks = m.branch_stacks;
  if (d.branch_stacks) {
    branch_stacks = branch_stacks.value_or(0);
    add_checked(*branch_stacks, *d.branch_stacks, meta, "its branch_stacks");
  }
  std::map<std::string, uint64_t> totals = m.totals;
  for (const auto& [file, total] : d.totals) {
    if (translated && !kept_when_translated(file)) continue;
    add_checked(totals[file], total, d.path + "/" + file, "its counts");
  }
  m.samples = samples;
  m.branch_stacks = branch_stacks;
  m.totals = std::move(totals);
  if (d.first_sample_ns != 0 && (m.first_sample_ns == 0 || d.first_sample_ns < m.first_sample_ns)) {
    m.first_sample_ns = d.first_sample_ns;
  }
  m.last_sample_ns = std::max(m.last_sample_ns, d.last_sample_ns);
  add_events(m.events, d.events);
  add_bolted_build_ids(m, d);
  if (translated) {
    ImageCounts in_input_terms;
    in_input_terms.no_lbr = d.counts.no_lbr;
    m.counts.add(in_input_terms);
  } else {
    m.counts.add(d.counts);
  }
  if (!d.no_lbr_file.empty()) m.no_lbr = true;
  if (!translated) m.rendered_again.insert(d.rendered_again.begin(), d.rendered_again.end());
  for (const auto& [file, text] : d.format_files) {
    if (translated && !kept_when_translated(file)) continue;
    std::unique_ptr<FormatMerger>& merger = m.formats[file];
    if (!merger) {
      for (ProfileFormat f : profile_formats()) {
        if (f->file == file && f->merger) merger = f->merger();
      }
    }
    if (merger) merger->add(text, d.path + "/" + file);
  }
}

// The merged directory: its files, in the profile store's order, and what meta.json says.
struct MergedFiles {
  std::vector<std::pair<std::string, std::string>> files;
  ImageMeta meta;
  RenderedProfiles rendered;
  std::vector<std::string> warnings;  // formats not rendered again, and why
};

// The binary the directory is a profile of, for the formats merge renders again: the file at
// meta.json's path, if it is still that binary (same build-id); else nullptr and why.
std::shared_ptr<LoadedImage> binary_of(const MergedBinary& m, std::string& why) {
  if (m.identity.build_id.empty()) {
    why = "the binary has no build-id to check " + m.identity.path + " against";
    return nullptr;
  }
  try {
    ImageLoadOptions options;
    options.keep_symbolized = false;
    std::shared_ptr<LoadedImage> image = LoadedImage::open_file(m.identity.path, options);
    if (image->identity().build_id != m.identity.build_id) {
      why = m.identity.path + " is another build now (build-id " +
            image->identity().build_id.to_hex() + ", not " + m.identity.build_id.to_hex() + ")";
      return nullptr;
    }
    return image;
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
}

// The binary, opened the first time a format made again needs it.
struct BinaryForRender {
  bool tried = false;
  std::shared_ptr<LoadedImage> image;
  std::string why;  // when there is none
};

// A format an input had that is made again from the summed counts, rendered with the binary,
// or left out with a warning naming why.
void render_again(const MergedBinary& m, ProfileFormat f, BinaryForRender& binary,
                  RenderedProfiles& rendered, std::vector<std::string>& warnings) {
  if (!binary.tried) {
    binary.tried = true;
    binary.image = binary_of(m, binary.why);
  }
  FormatResult r;
  if (binary.image) {
    r = f->render(FormatInput{*binary.image, m.counts,
                              m.counts.branches ? &*m.counts.branches : nullptr, false, nullptr});
  }
  if (!binary.image || !r.missing.empty()) {
    warnings.push_back(std::string(f->file) + " of " + m.first_path +
                       " and the others: not made (" + (binary.image ? r.missing : binary.why) +
                       ")");
    return;
  }
  rendered.files.emplace_back(std::string(f->file), std::move(r.content));
  if (!f->companion_file.empty())
    rendered.files.emplace_back(std::string(f->companion_file), std::move(r.companion));
  if (r.meta.is_object()) rendered.meta.update(r.meta);
}

MergedFiles files_of(const MergedBinary& m) {
  std::vector<std::string> warnings;
  BinaryForRender binary;
  RenderedProfiles rendered;  // the profile files meta.json lists, in the registry's order
  // bolt.fdata is branch fdata when any input's was; else the IP samples' no_lbr profile.
  rendered.branch_fdata = m.formats.count("bolt.fdata") > 0;
  for (ProfileFormat f : profile_formats()) {
    const std::string file(f->file);
    if (auto it = m.formats.find(file); it != m.formats.end()) {
      rendered.files.emplace_back(file, it->second->text());
    } else if (f == format_named("bolt") && m.no_lbr) {
      rendered.files.emplace_back(file, format_no_lbr_fdata(m.counts.no_lbr));
    } else if (m.rendered_again.count(f)) {
      render_again(m, f, binary, rendered, warnings);
    }
  }

  MergedFiles out;
  std::vector<std::pair<std::string, std::string>>& files = out.files;
  files = count_files(m.counts, bolt_fdata_of(rendered));
  files.insert(files.end(), rendered.files.begin(), rendered.files.end());
  out.meta.samples = m.samples;
  out.meta.first_sample_ns = m.first_sample_ns;
  out.meta.last_sample_ns = m.last_sample_ns;
  out.meta.events = m.events;
  out.meta.branch_stacks = m.branch_stacks;
  if (!m.bolted_build_ids.empty()) {
    nlohmann::ordered_json bat;
    bat["status"] = "merged";
    bat["bolted_build_ids"] = m.bolted_build_ids;
    rendered.meta["bolt_address_translation"] = std::move(bat);
  }
  out.rendered = std::move(rendered);
  out.warnings = std::move(warnings);
  return out;
}

// An input given must exist and be a directory (DirectoryHandle::open_path would create it),
// and be given once: the same host's counts added twice would weigh it double.
DirectoryHandle open_input(const std::string& path, std::set<std::pair<dev_t, ino_t>>& seen) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw OutputError(path, "no such directory");
  if (!S_ISDIR(st.st_mode))
    throw OutputError(path, "not a directory: not a profcollect output directory");
  if (!seen.emplace(st.st_dev, st.st_ino).second)
    throw OutputError(path, "given twice: its counts would be added twice");
  return DirectoryHandle::open_path(path, 0700);
}

}  // namespace

MergeSummary merge_profile_directories(const std::vector<std::string>& inputs,
                                       const std::string& output, GenerationModes modes) {
  MergeSummary summary;
  std::map<std::string, MergedBinary> merged;  // by directory name: basename + build-id
  // Translated profiles of BOLTed binaries, added last to their input binary's directory.
  std::vector<std::pair<BuildId, ProfileDirectory>> translated;
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
      std::optional<DirectoryHandle> directory =
          root.open_subdirectory(entry);  // refuses links, files
      if (!directory) continue;           // gone meanwhile
      ProfileDirectory files = read_profile_directory(*directory, DirectoryStrictness::Merge);
      for (const std::string& note : files.left_out) summary.warnings.push_back(note);
      is_output = true;
      if (std::optional<BuildId> input = translated_input(files)) {
        translated.emplace_back(std::move(*input), std::move(files));
        continue;
      }
      auto [it, first] = merged.try_emplace(entry);
      add_directory(it->second, files, first);
    }
    if (!is_output) {
      throw OutputError(
          input,
          "holds no profcollect output (no collection.json, no <binary>-<build-id>/ directories)");
    }
  }

  // A translated profile joins the directory of its input binary (by build-id, whatever the
  // names), or one of its own named after the BOLTed file with the input's build-id.
  for (const auto& [input, files] : translated) {
    auto it = std::find_if(merged.begin(), merged.end(), [&](const auto& named) {
      return named.second.identity.build_id == input;
    });
    bool first = false;
    if (it == merged.end()) {
      std::tie(it, first) =
          merged.try_emplace(BinaryIdentity{files.identity.path, input}.directory_name());
    }
    add_directory(it->second, files, first, input);
  }

  // Everything made before the first write.
  std::vector<std::pair<std::string, MergedFiles>> directories;
  for (const auto& [name, binary] : merged) directories.emplace_back(name, files_of(binary));
  const DirectoryHandle out = DirectoryHandle::open_path(output, modes.directory);
  for (std::string& done : remove_leftover_generations(out))
    summary.warnings.push_back(std::move(done));
  for (auto& [name, made] : directories) {
    for (std::string& warning : made.warnings) summary.warnings.push_back(std::move(warning));
    write_profile_directory(out, name, std::move(made.files), merged.at(name).identity,
                            std::move(made.meta), made.rendered, modes);
    summary.binaries.push_back(name);
  }
  return summary;
}

}  // namespace profcollect
