#include "output/profile_renderer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "output/autofdo_writer.h"
#include "output/fdata_branch_writer.h"
#include "output/json_text.h"
#include "output/preagg_writer.h"
#include "output/range_profile.h"

namespace profcollect {

const char* profile_file_name(ProfileFormat f) {
  switch (f) {
    case ProfileFormat::Bolt: return "bolt.fdata";
    case ProfileFormat::Preagg: return "bolt.preagg";
    case ProfileFormat::Autofdo: return "autofdo.prof";
    case ProfileFormat::Unsymbolized: return "autofdo.unsym";
  }
  return "";
}

const char* profile_format_name(ProfileFormat f) {
  switch (f) {
    case ProfileFormat::Bolt: return "bolt";
    case ProfileFormat::Preagg: return "preagg";
    case ProfileFormat::Autofdo: return "autofdo";
    case ProfileFormat::Unsymbolized: return "unsymbolized";
  }
  return "";
}

bool RenderRequest::wants(ProfileFormat f) const {
  return std::find(formats.begin(), formats.end(), f) != formats.end();
}

RenderedProfiles render_profiles(const LoadedImage& image, const ImageCounts& counts, const RenderRequest& request) {
  RenderedProfiles out;
  const BranchSamples* branches = counts.branches && counts.branches->stacks > 0 ? counts.branches : nullptr;
  // Branch ranges, when there are (branch stacks and debug info to count them with), are what
  // AutoFDO wants; else the IP samples.
  const bool from_ranges = branches != nullptr && !branches->ranges.empty();
  for (ProfileFormat f : request.formats) {
    std::string content;
    switch (f) {
      case ProfileFormat::Bolt:
        if (branches && !request.no_lbr) {
          if (BoltBlockMap* blocks = image.blocks()) {
            FdataBranchWriter writer(image.symbols(), *blocks);
            content = writer.write(branches->bolt);
            out.branch_fdata = true;
            break;
          }
        }
        content = format_no_lbr_fdata(counts.no_lbr);
        break;
      case ProfileFormat::Preagg:
        if (!branches) {
          out.missing.emplace_back(f, "no branch stacks: the pre-aggregated format needs branch samples");
          continue;
        }
        content = PreaggWriter::write(branches->bolt);
        break;
      case ProfileFormat::Autofdo: {
        const AutofdoBinary* debug = image.debug();
        if (!debug) {
          out.missing.emplace_back(f, image.debug_error());
          continue;
        }
        content = from_ranges ? write_autofdo_from_ranges(branches->ranges, *debug)
                              : write_autofdo_from_ips(counts.ips, *debug);
        break;
      }
      case ProfileFormat::Unsymbolized:
        // Needs no debug info: symbolized later, where the debug info is.
        content = write_unsymbolized_profile(from_ranges ? branches->ranges : ranges_from_ips(counts.ips),
                                             image.elf()->preferred_base());
        out.unsymbolized = from_ranges ? UnsymbolizedKind::BranchRanges : UnsymbolizedKind::IpSamples;
        break;
    }
    out.files.emplace_back(profile_file_name(f), std::move(content));
  }
  return out;
}

std::string render_meta(const BinaryIdentity& identity, const ImageMeta& m, const RenderedProfiles& rendered) {
  nlohmann::ordered_json meta;
  meta["path"] = identity.path;
  meta["build_id"] = identity.build_id.to_hex();
  meta["samples"] = m.samples;
  meta["first_sample_ns"] = m.first_sample_ns;
  meta["last_sample_ns"] = m.last_sample_ns;
  meta["event"] = m.events.empty() ? std::string() : m.events.front();
  meta["events"] = m.events;
  meta["bolt_fdata"] = rendered.branch_fdata ? "branch" : "no_lbr";
  if (m.branch_stacks) meta["branch_stacks"] = *m.branch_stacks;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const auto& [name, content] : rendered.files) files.push_back(name);
  meta["formats"] = files;
  if (rendered.unsymbolized) {
    meta["unsymbolized"] = unsymbolized_kind_name(*rendered.unsymbolized);
    meta["unsymbolized_profgen_flags"] = unsymbolized_profgen_flags(*rendered.unsymbolized);
  }
  if (!m.input.empty()) meta["input"] = m.input;
  return json_text(meta) + "\n";
}

}  // namespace profcollect
