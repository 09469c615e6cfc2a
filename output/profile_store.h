// The output layout shared by live collection (CLI and daemon): one directory per binary, a
// collection summary beside them, every file replaced atomically.
//
//   DIR/collection.json                      the whole collection: event, rate, samples, losses
//   DIR/<basename>-<build-id>/bolt.fdata     BOLT no_lbr profile of that binary
//   DIR/<basename>-<build-id>/meta.json      path, build_id, samples, first/last_sample_ns, event
//   DIR/<basename>-<build-id>/autofdo.prof   LLVM sample profile, when the binary has debug info
//   DIR/<basename>-<build-id>/samples.ip     the counts per ELF address ("<hex vaddr> <count>"),
//                                            from which profiles are remade as runs add up
//   DIR/<basename>-<build-id>/samples.branch branch-stack counts (output/branch_samples_file.h),
//                                            with branch events; then bolt.fdata is BOLT's
//                                            branch fdata and bolt.preagg is written too
//   DIR/<basename>-nobuildid-<hash>/...      a binary without build-id; the hash (FNV-1a, 16 hex
//                                            digits) is of its path, device, inode and mtime
//
// A binary's files are replaced together, as one generation (output/profile_generation.h): after
// a crash at any instant its directory holds the files of one flush, which count the same
// samples. Every entry is reached through the output directory's descriptor without following
// links (output/directory_handle.h): a symlink or another user's entry planted under a binary's
// name is refused and reported, never written through. New directories are 0700 and files 0600
// unless the modes say otherwise. Profiles are cumulative: what an earlier run left in a
// binary's directory is read once, by the profile directory codec's rules
// (output/profile_directory.h), and added to; a directory with a damaged file (unreadable, cut
// short, its totals not meta.json's, another binary's build-id) is set aside whole (its files
// renamed *.unreadable-<time>, kept in later generations) and restarts. meta.json says what the
// files hold as rendered: bolt_fdata is "no_lbr" when the renderer fell back to it.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "record/build_id.h"
#include "mapper/loaded_image.h"
#include "output/image_counts.h"
#include "output/profile_generation.h"
#include "output/profile_renderer.h"

#include <functional>
#include <utility>
#include <vector>

namespace profcollect {

// What this run has gathered for one binary (cumulative within the run).
struct BinaryProfileSnapshot {
  BinaryIdentity identity;
  ImageCounts counts;  // this run's
  uint64_t samples = 0;
  uint64_t first_sample_ns = 0, last_sample_ns = 0;  // Unix epoch; 0 when no sample yet
  std::string event;                                 // the first of `events`
  std::vector<std::string> events;                   // the events of this run's samples
  // Makes the profile files from the cumulative counts (output/profile_renderer.h); without it
  // only bolt.fdata (no_lbr) is written. Needed with branch samples.
  std::function<RenderedProfiles(const ImageCounts&)> render;
};

class ProfileStore {
 public:
  // Creates DIR if needed, checks that files can be created in it, and removes what interrupted
  // writes of an earlier run left (said in take_warnings()). Throws OutputError.
  explicit ProfileStore(std::string dir, GenerationModes modes = {});

  // Writes the binary's profiles, made from earlier runs' counts plus `snapshot`, then
  // meta.json. Throws OutputError; files already on disk stay intact.
  void write_binary(const BinaryProfileSnapshot& snapshot);
  void write_collection(const std::string& name, const nlohmann::ordered_json& summary);
  // Forgets what was read of a binary's directory: the next write reads it again from disk,
  // where the last flush put everything this run had (a released image's counts), or finds
  // nothing (a directory the daemon's disk budget removed).
  void forget(const std::string& directory) { bases_.erase(directory); }

  const std::string& dir() const { return dir_; }
  // Warnings met while reading earlier runs' files (unreadable fdata moved aside, ...).
  std::vector<std::string> take_warnings();

 private:
  struct Base {
    ImageCounts counts;
    uint64_t samples = 0;
    uint64_t first_sample_ns = 0;
    uint64_t last_sample_ns = 0;
  };
  const Base& base_for(const std::string& name);

  std::string dir_;
  DirectoryHandle root_;
  GenerationModes modes_;
  std::map<std::string, Base>
      bases_;  // per binary directory name, read at its first write this run
  std::vector<std::string> warnings_;
};

}  // namespace profcollect
