#include "output/profile_renderer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "output/function_profile.h"
#include "output/json_text.h"

namespace profcollect {

bool RenderRequest::wants(ProfileFormat f) const {
  return std::find(formats.begin(), formats.end(), f) != formats.end();
}

RenderedProfiles render_profiles(const LoadedImage& image, const ImageCounts& counts,
                                 const RenderRequest& request, const RenderStop* stop) {
  RenderedProfiles out;
  const FormatInput input{
      image, counts, counts.branches && counts.branches->stacks > 0 ? &*counts.branches : nullptr,
      request.no_lbr, stop};
  for (ProfileFormat f : request.formats) {
    if (stop) stop->check();
    FormatResult r = f->render(input);
    if (!r.missing.empty()) {
      out.missing.emplace_back(f, std::move(r.missing));
      continue;
    }
    if (r.meta.is_object()) {
      for (const auto& [key, value] : r.meta.items()) out.meta[key] = value;
    }
    out.files.emplace_back(std::string(f->file), std::move(r.content));
    if (!f->companion_file.empty())
      out.files.emplace_back(std::string(f->companion_file), std::move(r.companion));
  }
  out.branch_fdata = out.meta.value("bolt_fdata", std::string()) == "branch";
  const BoltedBinary& bolted = image.bolted();
  if (bolted.status() != BatStatus::NotBolted) {
    out.meta["bolt_address_translation"] =
        translation_meta(bolted, FunctionProfile::build(counts.ips, image.symbols(), &bolted));
  }
  return out;
}

nlohmann::ordered_json translation_meta(const BoltedBinary& bolted, const FunctionProfile& ips) {
  nlohmann::ordered_json bat;
  bat["status"] = to_string(bolted.status());
  bat["input_build_id"] = bolted.input_build_id().to_hex();
  if (const BoltAddressTranslation* table = bolted.table()) {
    bat["functions"] = table->hot_functions();
    bat["cold_fragments"] = table->cold_fragments();
    bat["samples_translated"] = ips.translation.translated;
    bat["samples_in_cold_fragments"] = ips.translation.cold_fragments;
    bat["samples_not_rewritten"] = ips.translation.not_rewritten;
    bat["samples_in_no_function"] = ips.unsymbolized;
  } else {
    bat["reason"] = bolted.reason();
  }
  return bat;
}

std::string render_meta(const BinaryIdentity& identity, const ImageMeta& m,
                        const RenderedProfiles& rendered) {
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
  // Each format asked for that this binary cannot have (no debug info for AutoFDO, no address
  // map for Propeller), with why: live collection and the daemon go on without it. Always there
  // (empty when nothing is missing): one schema whoever writes it.
  nlohmann::ordered_json missing = nlohmann::ordered_json::object();
  for (const auto& [format, why] : rendered.missing) missing[std::string(format->name)] = why;
  meta["formats_not_written"] = missing;
  for (const auto& [key, value] : rendered.meta.items()) {
    if (key != "bolt_fdata") meta[key] = value;  // said above, from what bolt.fdata holds
  }
  if (!m.input.empty()) meta["input"] = m.input;
  if (!m.file_totals.empty()) {
    nlohmann::ordered_json totals = nlohmann::ordered_json::object();
    for (const auto& [name, total] : m.file_totals) totals[name] = total;
    meta["file_totals"] = std::move(totals);
  }
  return json_text(meta) + "\n";
}

}  // namespace profcollect
