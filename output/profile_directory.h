// The one codec of a profile directory (output/profile_store.h's layout: a binary's
// <basename>-<build-id>/ and the kernel's kernel.kallsyms-<build-id>/): what the profile store,
// `merge`, `report DIR` and the kernel collection read, with one set of rules, and how meta.json
// is written so that those rules can be checked.
//
// Every entry is reached through the directory's descriptor (output/directory_handle.h: openat
// with O_NOFOLLOW, a link is never followed, another user's entry is refused); hidden entries
// (".*": a write in progress, a killed run's leftovers) are skipped.
//
// What is checked, everywhere:
//   meta.json     a JSON object; path and build_id are strings, build_id a build-id equal to the
//                 directory name's (<basename>-<build-id>; empty for <basename>-nobuildid-<hash>);
//                 samples a count; first/last_sample_ns, branch_stacks counts when present;
//                 events a list of names; bolt_fdata "branch" or "no_lbr"; every file its
//                 formats list is present.
//   every file    parses whole with its format's reader and ends with a newline (a file cut
//                 mid-line mostly does not); its total is what meta.json's file_totals says.
// The totals, and why those: a profile file's lines are independent, so a file truncated at a
// line boundary still parses, and only a count written beside it tells what is missing. meta.json
// is written last of a generation, from the files themselves, with file_totals: per file the sum
// of every count it holds (no_lbr and branch fdata: counts and mispredicts; bolt.preagg: branch,
// mispredict and fall-through counts; autofdo.prof: function totals, head samples, line and call
// counts, inlined callees' too; samples.ip: its counts; samples.branch: stacks and every count).
// A file meta.json gives a total for must be there and hold that total. meta.json itself, being
// one JSON object, cannot be truncated and still parse. Directories written before file_totals
// existed are checked by what always holds: the no_lbr profile counts at most meta.json's samples
// (it holds the samples that fell in a function), samples.branch's stacks are its branch_stacks.
// The kernel's kallsyms directory (output/kallsyms_profile.h) is checked by its own totals:
// samples.ip holds meta.json's samples, functions.txt and unattributed add up to kernel_samples.
//
// What a fault costs depends on who reads (DirectoryStrictness):
//   Store   the directory's files are set aside (renamed *.unreadable-<time>, fsynced) and
//           nothing of them is added to; the faults say why. Profiles restart from this run.
//   Merge   the first fault is an OutputError naming the file and the reason: a merged profile
//           never silently counts less (or more) than its inputs.
//   Report  every fault is described and what could be read is returned.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mapper/loaded_image.h"
#include "output/branch_samples_file.h"
#include "output/count_sum.h"
#include "output/directory_handle.h"
#include "output/fdata_reader.h"
#include "output/image_counts.h"
#include "output/ip_profile.h"
#include "output/kallsyms_profile.h"
#include "output/profile_generation.h"
#include "output/profile_renderer.h"

namespace profcollect {

enum class DirectoryStrictness { Store, Merge, Report };

struct DirectoryFault {
  std::string file;  // the entry's path
  std::string reason;
  std::string text() const { return file + ": " + reason; }
};

// One binary's profile directory as read.
struct ProfileDirectory {
  std::string path;         // the directory, for messages
  nlohmann::json meta;      // meta.json as read; null when missing or damaged
  BinaryIdentity identity;  // path and build-id as meta.json gives them
  uint64_t samples = 0;
  uint64_t first_sample_ns = 0, last_sample_ns = 0;  // 0 when unknown
  std::vector<std::string> events;
  std::optional<uint64_t> branch_stacks;
  // The counts of the files that hold them, each when present and sound: the IP samples' no_lbr
  // profile (bolt.fdata, or bolt.nolbr.fdata beside a branch bolt.fdata), samples.ip and
  // samples.branch (counts.branches only when there is one).
  ImageCounts counts;
  std::string no_lbr_file;  // the file counts.no_lbr came from; empty when none
  // The registered formats' files (output/profile_format.h) as read and checked, by file name,
  // for merge: bolt.fdata only when it is branch fdata (no_lbr is read above).
  std::map<std::string, std::string> format_files;
  // Each profile file's total as read (see above), for sums checked against 2^64.
  std::map<std::string, uint64_t> totals;
  // The formats whose files are there and which merge renders again (FormatSpec::merge_renders).
  std::vector<ProfileFormat> rendered_again;
  // Entries not read, with the reason (set-aside files, unsymbolized profiles, others).
  std::vector<std::string> left_out;
  std::vector<std::string> set_aside;  // names of the files set aside by an earlier run
  // Report: every fault. Store: the faults for which the files were set aside (then every other
  // field is empty). Merge: none (the first one throws).
  std::vector<DirectoryFault> faults;
};

// Reads the binary directory `directory` (see above). Throws OutputError only with Merge, or
// when the directory itself cannot be listed.
ProfileDirectory read_profile_directory(const DirectoryHandle& directory,
                                        DirectoryStrictness strictness);

// The kernel's kallsyms directory as read: the profile when sound, else the faults (Store: the
// files were set aside). Merge throws at the first fault.
struct KallsymsDirectory {
  std::optional<KallsymsProfile> profile;
  std::vector<DirectoryFault> faults;
};
KallsymsDirectory read_kallsyms_directory(const DirectoryHandle& directory,
                                          DirectoryStrictness strictness);

// Store's warning for faults whose directory was set aside: the faults and what became of it.
std::string set_aside_warning(const std::vector<DirectoryFault>& faults);

// meta.json's file_totals of `files` (name, content) written into the directory `where`: each
// profile file's total by the reader's rule. Throws OutputError for a file that would not read.
std::vector<std::pair<std::string, uint64_t>> file_totals_of(
    const std::vector<std::pair<std::string, std::string>>& files, bool branch_fdata,
    const std::string& where);

// What a binary directory's bolt.fdata is: none (BOLT's format was not asked for), the no_lbr
// profile of the IP samples, or BOLT's branch profile.
enum class BoltFdataKind { None, NoLbr, Branch };
BoltFdataKind bolt_fdata_of(const RenderedProfiles& rendered);

// The files that keep `counts` in a binary directory whose bolt.fdata is `bolt_fdata`, so that
// the next run or a merge adds to them, in the order the directory lists them: the no_lbr profile
// as bolt.nolbr.fdata unless bolt.fdata holds it (or it is not needed: no branch samples and no
// branch bolt.fdata), samples.ip, and samples.branch with branch samples. A kind of count with
// nothing in it has no file.
std::vector<std::pair<std::string, std::string>> count_files(const ImageCounts& counts,
                                                             BoltFdataKind bolt_fdata);

// Writes the binary directory `name` of `parent` as one generation (output/profile_generation.h):
// `files` (name, content) then meta.json, made by render_meta() from `meta` and `rendered` with
// file_totals counted from `files` themselves. Throws OutputError; the directory stays as it was.
void write_profile_directory(const DirectoryHandle& parent, const std::string& name,
                             std::vector<std::pair<std::string, std::string>> files,
                             const BinaryIdentity& identity, ImageMeta meta,
                             const RenderedProfiles& rendered, GenerationModes modes = {});

}  // namespace profcollect
