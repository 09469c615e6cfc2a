// The one renderer: every requested format of one image's profile, made from its counts, and
// the one meta.json schema that describes them. convert writes what it returns to its output;
// the profile store writes it into the image's directory, counts of earlier runs included.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mapper/loaded_image.h"
#include "output/branch_samples_file.h"
#include "output/fdata_reader.h"
#include "output/function_profile.h"
#include "output/ip_profile.h"
#include "output/profile_format.h"
#include "output/render_stop.h"

namespace profcollect {

struct RenderRequest {
  std::vector<ProfileFormat> formats;  // output/profile_format.h
  // BOLT's profile from the IP samples even when there are branch stacks.
  bool no_lbr = false;
  bool wants(ProfileFormat f) const;
};

struct RenderedProfiles {
  std::vector<std::pair<std::string, std::string>> files;  // (file name, content), in format order
  // Formats that could not be made, with the reason (no debug info, no branch stacks, ...).
  std::vector<std::pair<ProfileFormat, std::string>> missing;
  bool branch_fdata = false;  // bolt.fdata is BOLT's branch profile, not no_lbr
  // What the formats add to meta.json (bolt_fdata, unsymbolized, ...), in format order.
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();
};

// `stop`, when given, is checked before each format and while AutoFDO symbolizes: a render
// asked to stop throws RenderStopped (output/render_stop.h).
RenderedProfiles render_profiles(const LoadedImage& image, const ImageCounts& counts,
                                 const RenderRequest& request, const RenderStop* stop = nullptr);

// meta.json's "bolt_address_translation" of a BOLTed binary (RenderedProfiles::meta has it):
// status (translated, no_table, unreadable), input_build_id (the binary BOLT read), and with a
// table its functions and cold_fragments and where the IP samples went: samples_translated (of
// them samples_in_cold_fragments), samples_not_rewritten (functions BOLT left: offsets kept),
// samples_in_no_function; without one, the reason.
nlohmann::ordered_json translation_meta(const BoltedBinary& bolted, const FunctionProfile& ips);

// meta.json of an image: path, build_id, samples, first_sample_ns, last_sample_ns, event,
// events, bolt_fdata ("branch" or "no_lbr"), branch_stacks (with branch stacks), formats (the
// files written), unsymbolized and unsymbolized_profgen_flags (with autofdo.unsym), input (when
// made from one recording), file_totals (a profile directory's: each file's count of counts, by
// which output/profile_directory.h finds a truncated file).
struct ImageMeta {
  uint64_t samples = 0;
  uint64_t first_sample_ns = 0, last_sample_ns = 0;
  std::vector<std::string> events;
  std::optional<uint64_t> branch_stacks;
  std::string input;
  std::vector<std::pair<std::string, uint64_t>> file_totals;  // (file name, total)
};
std::string render_meta(const BinaryIdentity& identity, const ImageMeta& meta,
                        const RenderedProfiles& rendered);

}  // namespace profcollect
