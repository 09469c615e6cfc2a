// The one renderer: every requested format of one image's profile, made from its counts, and
// the one meta.json schema that describes them. convert writes what it returns to its output;
// the profile store writes it into the image's directory, counts of earlier runs included.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mapper/loaded_image.h"
#include "output/branch_samples_file.h"
#include "output/fdata_reader.h"
#include "output/ip_profile.h"
#include "output/unsymbolized_writer.h"

namespace profcollect {

enum class ProfileFormat { Bolt, Preagg, Autofdo, Unsymbolized };

// File name of each format in an image's directory: bolt.fdata, bolt.preagg, autofdo.prof,
// autofdo.unsym.
const char* profile_file_name(ProfileFormat format);
const char* profile_format_name(ProfileFormat format);  // bolt, preagg, autofdo, unsymbolized

struct RenderRequest {
  std::vector<ProfileFormat> formats;
  // BOLT's profile from the IP samples even when there are branch stacks.
  bool no_lbr = false;
  bool wants(ProfileFormat f) const;
};

// What an image's profiles are made from.
struct ImageCounts {
  const IpProfile& ips;
  const NoLbrFdata& no_lbr;       // the IP samples as BOLT's no_lbr profile (events included)
  const BranchSamples* branches;  // null without branch stacks
};

struct RenderedProfiles {
  std::vector<std::pair<std::string, std::string>> files;  // (file name, content), in format order
  // Formats that could not be made, with the reason (no debug info, no branch stacks, ...).
  std::vector<std::pair<ProfileFormat, std::string>> missing;
  bool branch_fdata = false;  // bolt.fdata is BOLT's branch profile, not no_lbr
  std::optional<UnsymbolizedKind> unsymbolized;
};

RenderedProfiles render_profiles(const LoadedImage& image, const ImageCounts& counts, const RenderRequest& request);

// meta.json of an image: path, build_id, samples, first_sample_ns, last_sample_ns, event,
// events, bolt_fdata ("branch" or "no_lbr"), branch_stacks (with branch stacks), formats (the
// files written), unsymbolized and unsymbolized_profgen_flags (with autofdo.unsym), input (when
// made from one recording).
struct ImageMeta {
  uint64_t samples = 0;
  uint64_t first_sample_ns = 0, last_sample_ns = 0;
  std::vector<std::string> events;
  std::optional<uint64_t> branch_stacks;
  std::string input;
};
std::string render_meta(const BinaryIdentity& identity, const ImageMeta& meta, const RenderedProfiles& rendered);

}  // namespace profcollect
