// The profile formats, as one registry: each entry says what a format is called in settings, the
// file it is written to in a binary's directory, what it is made from, how it is rendered from an
// image's counts and how the files of many hosts are merged. A format's code is one file
// (output/format_NAME.cpp, defining its entry); profile_format.cpp lists the entries. Everything
// that names, parses, renders or merges formats (convert, live collection, the daemon's `formats`
// key, the kernel command, merge, report) goes through here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mapper/loaded_image.h"
#include "output/branch_samples_file.h"
#include "output/fdata_reader.h"
#include "output/image_counts.h"
#include "output/ip_profile.h"
#include "output/render_stop.h"

namespace profcollect {

struct FormatInput {
  const LoadedImage& image;
  const ImageCounts& counts;
  const BranchSamples* branches;  // counts.branches when it holds stacks, else null
  bool no_lbr = false;            // BOLT's profile from the IP samples even with branch stacks
  const RenderStop* stop = nullptr;
};

struct FormatResult {
  std::string content;
  std::string companion;        // the format's companion_file, when it has one
  std::string missing;          // not empty: the format could not be made, and why
  nlohmann::ordered_json meta;  // what the format adds to meta.json (an object, or null)
};

// Sums one format's files of many directories (merge). Each add() is one directory's file.
class FormatMerger {
 public:
  virtual ~FormatMerger() = default;
  // Throws OutputError naming `where` for a file it cannot read. The codec has checked the file
  // (its total) and merge that the totals' sum stays below 2^64, so no count wraps here.
  virtual void add(std::string_view text, const std::string& where) = 0;
  virtual std::string text() const = 0;
};

struct FormatSpec {
  std::string_view name;  // as settings name it: "bolt"
  std::string_view file;  // in a binary's directory: "bolt.fdata"
  // A second file it writes beside it (Propeller's symbol order), or empty. It is made and
  // merged with `file`, never alone.
  std::string_view companion_file = {};
  std::string_view description;  // one line, for help and the documentation
  // Written by live collection and the daemon unless settings name formats.
  bool live_default = false;
  bool kernel = false;  // the kernel profile can be written in it
  // What it is made from besides the IP samples: the branch stacks' taken branches, the
  // fall-through ranges between them, the binary's debug info (without it, the format is missing).
  bool branch_stacks = false, branch_ranges = false, debug_info = false;
  // Needs the binary's basic-block address map (clang -fbasic-block-address-map): without it,
  // the format is missing.
  bool block_address_map = false;
  // Reads the IP samples per function symbol (ImageCounts::no_lbr), which needs the binary's
  // symbol table named as BOLT names it.
  bool function_symbols = false;
  FormatResult (*render)(const FormatInput& input) = nullptr;
  // The sum of every count a file of the format holds (the profile-directory codec checks it
  // against meta.json's file_totals, output/profile_directory.h), or nullopt with `why` when the
  // text is not such a file or its counts pass 2^64. Null: the codec leaves the format's files
  // out (they are not merged; the samples files hold what they were made from).
  std::optional<uint64_t> (*total)(std::string_view text, std::string* why) = nullptr;
  // A merger of the format's files (merge); set exactly when `total` is.
  std::unique_ptr<FormatMerger> (*merger)() = nullptr;
  // Not a sum of its files: merge renders it again from the summed counts and the binary (an
  // inference over the samples is not additive). Only for a format without `merger`.
  bool merge_renders = false;
};

using ProfileFormat = const FormatSpec*;

// Every format, in the order their files are written.
const std::vector<ProfileFormat>& profile_formats();
// The format of that name, or null.
ProfileFormat find_format(std::string_view name);
ProfileFormat format_named(
    std::string_view name);  // throws std::logic_error for a name not registered

// A comma-separated list of format names, as settings give it. Throws FormatListError (its
// message begins with "{format}", the setting's placeholder) for an unknown or empty name, or a
// format the kernel profile has not when `kernel`.
struct FormatListError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
std::vector<ProfileFormat> parse_format_list(const std::string& list, bool kernel = false);
// "bolt, preagg, bolt-inferred, autofdo, unsymbolized" (the kernel's when `kernel`).
std::string format_names(bool kernel = false);
// The formats live collection writes when settings name none.
std::vector<ProfileFormat> live_default_formats();

}  // namespace profcollect
