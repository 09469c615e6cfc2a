#include "output/profile_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "output/atomic_file.h"
#include "output/json_text.h"
#include "output/profile_directory.h"
#include "output/profile_generation.h"

namespace profcollect {

ProfileStore::ProfileStore(std::string dir, GenerationModes modes)
    : dir_(std::move(dir)),
      root_(DirectoryHandle::open_path(dir_, modes.directory)),
      modes_(modes) {
  // Known now, not after the workload ran: a file can be created in the directory.
  const std::string probe = temporary_name(".profcollect-probe.tmp-");
  const int fd = ::openat(root_.fd(), probe.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, modes_.file);
  if (fd < 0)
    throw OutputError(dir_, std::string("cannot create files in it: ") + std::strerror(errno));
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
  std::optional<DirectoryHandle> current =
      root_.open_subdirectory(name);  // refuses links, others' entries
  if (!current) return bases_.emplace(name, std::move(base)).first->second;
  // A damaged directory is set aside by the codec (output/profile_directory.h) and restarts.
  ProfileDirectory earlier = read_profile_directory(*current, DirectoryStrictness::Store);
  if (!earlier.faults.empty()) {
    warnings_.push_back(set_aside_warning(earlier.faults));
    return bases_.emplace(name, std::move(base)).first->second;
  }
  base.counts = std::move(earlier.counts);
  base.samples = earlier.samples;
  base.first_sample_ns = earlier.first_sample_ns;
  base.last_sample_ns = earlier.last_sample_ns;
  return bases_.emplace(name, std::move(base)).first->second;
}

void ProfileStore::write_binary(const BinaryProfileSnapshot& s) {
  const std::string name = s.identity.directory_name();
  const std::string subdir = root_.path_of(name);
  const Base& base = base_for(name);
  ImageCounts counts = base.counts;
  counts.add(s.counts);
  uint64_t first = base.first_sample_ns;
  if (first == 0 || (s.first_sample_ns != 0 && s.first_sample_ns < first))
    first = s.first_sample_ns;
  // Branch samples from this run or an earlier one make this a branch profile.
  const bool branch_mode = counts.branches.has_value();
  if (branch_mode && !s.render) {
    throw OutputError(subdir + "/bolt.fdata", "branch samples given without a way to write them");
  }
  // Every file is made before the first is written: a failure while making them (the AutoFDO
  // and BOLT writers decode the binary) leaves the directory as the last flush left it, never
  // with new profiles and an old or missing meta.json.
  RenderedProfiles rendered;
  if (s.render) {
    rendered = s.render(counts);
  } else {
    rendered.files.emplace_back("bolt.fdata", format_no_lbr_fdata(counts.no_lbr));
  }
  // meta.json says what was rendered: with branch samples bolt.fdata is branch fdata unless the
  // renderer fell back to no_lbr (no BOLT block map, an i386 process); the count files follow.
  std::vector<std::pair<std::string, std::string>> files =
      count_files(counts, bolt_fdata_of(rendered));
  for (auto& file : rendered.files) files.push_back(file);
  ImageMeta meta;
  meta.samples = base.samples + s.samples;
  meta.first_sample_ns = first;
  meta.last_sample_ns = std::max(base.last_sample_ns, s.last_sample_ns);
  meta.events = s.events;
  if (meta.events.empty() && !s.event.empty()) meta.events = {s.event};
  if (branch_mode) meta.branch_stacks = counts.branches->stacks;
  write_profile_directory(root_, name, std::move(files), s.identity, std::move(meta), rendered,
                          modes_);
}

void ProfileStore::write_collection(const std::string& name,
                                    const nlohmann::ordered_json& summary) {
  root_.replace_file(name, json_text(summary) + "\n", modes_.file);
}

}  // namespace profcollect
