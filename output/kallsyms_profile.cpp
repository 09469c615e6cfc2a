#include "output/kallsyms_profile.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "output/ip_samples_file.h"
#include "output/json_text.h"
#include "output/range_profile.h"
#include "output/unsymbolized_writer.h"

namespace profcollect {

namespace {

uint64_t earliest(uint64_t a, uint64_t b) { return !a ? b : !b ? a : std::min(a, b); }

}  // namespace

void add_kallsyms_profile(KallsymsProfile& into, const KallsymsProfile& more) {
  into.text_offsets.merge(more.text_offsets);
  add_kernel_functions(into.functions, more.functions);
  into.first_sample_ns = earliest(into.first_sample_ns, more.first_sample_ns);
  into.last_sample_ns = std::max(into.last_sample_ns, more.last_sample_ns);
}

std::vector<std::pair<std::string, std::string>> render_kallsyms_profile(
    const KallsymsProfile& profile, const KallsymsProfileLabels& labels) {
  std::vector<std::pair<std::string, std::string>> files;
  // Offsets already: the unsymbolized profile's base is 0.
  files.emplace_back("autofdo.unsym",
                     write_unsymbolized_profile(ranges_from_ips(profile.text_offsets), 0));
  files.emplace_back("functions.txt", render_kernel_functions(profile.functions));
  files.emplace_back("samples.ip", format_ip_samples(profile.text_offsets));
  nlohmann::ordered_json meta;
  meta["path"] = "[kernel.kallsyms]";
  meta["build_id"] = labels.build_id;
  meta["samples"] = profile.text_offsets.total();
  meta["kernel_samples"] = profile.functions.samples;
  meta["unattributed"] = profile.functions.unattributed;
  nlohmann::ordered_json modules = nlohmann::ordered_json::object();
  for (const auto& [name, count] : profile.functions.modules) modules[name] = count;
  meta["modules"] = std::move(modules);
  meta["first_sample_ns"] = profile.first_sample_ns;
  meta["last_sample_ns"] = profile.last_sample_ns;
  meta["event"] = labels.event;
  meta["formats"] = {"autofdo.unsym", "functions.txt"};
  meta["unsymbolized"] = unsymbolized_kind_name(UnsymbolizedKind::IpSamples);
  meta["unsymbolized_base"] = "runtime _text";
  meta["llvm_profgen"] = std::string("llvm-profgen --kernel --binary=vmlinux ") +
                         unsymbolized_profgen_flags(UnsymbolizedKind::IpSamples) +
                         " --output=kernel.afdo";
  files.emplace_back("meta.json", json_text(meta) + "\n");
  return files;
}

std::optional<KallsymsProfile> parse_kallsyms_profile(std::string_view samples_ip,
                                                      std::string_view functions,
                                                      std::string_view meta_json,
                                                      std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<KallsymsProfile> {
    if (error) *error = why;
    return std::nullopt;
  };
  KallsymsProfile p;
  std::string why;
  auto offsets = parse_ip_samples(samples_ip, &why);
  if (!offsets) return fail("samples.ip: " + why);
  p.text_offsets = std::move(*offsets);
  auto summary = parse_kernel_functions(functions, &why);
  if (!summary) return fail("functions.txt: " + why);
  p.functions = std::move(*summary);

  const nlohmann::json meta = nlohmann::json::parse(meta_json, nullptr, false);
  if (!meta.is_object()) return fail("meta.json: not a JSON object");
  auto count = [&](const char* key, uint64_t& out) {
    const auto it = meta.find(key);
    if (it == meta.end() || !it->is_number_unsigned()) return false;
    out = it->get<uint64_t>();
    return true;
  };
  uint64_t image_samples = 0;
  if (!count("samples", image_samples) || !count("kernel_samples", p.functions.samples) ||
      !count("unattributed", p.functions.unattributed) ||
      !count("first_sample_ns", p.first_sample_ns) || !count("last_sample_ns", p.last_sample_ns)) {
    return fail(
        "meta.json: samples, kernel_samples, unattributed, first_sample_ns and last_sample_ns must "
        "be counts");
  }
  const auto modules = meta.find("modules");
  if (modules == meta.end() || !modules->is_object())
    return fail("meta.json: modules must be an object");
  for (const auto& [name, value] : modules->items()) {
    if (!value.is_number_unsigned()) return fail("meta.json: modules." + name + " must be a count");
    p.functions.modules.emplace_back(name, value.get<uint64_t>());
  }
  // The files of one generation count the same samples.
  if (p.text_offsets.total() != image_samples)
    return fail("samples.ip does not hold meta.json's samples");
  uint64_t attributed = 0;
  for (KernelFunctionCount& f : p.functions.functions) {
    attributed += f.samples;
    if (attributed < f.samples) return fail("functions.txt: the counts overflow");
  }
  if (attributed + p.functions.unattributed != p.functions.samples) {
    return fail("functions.txt and meta.json's unattributed do not add up to its kernel_samples");
  }
  for (KernelFunctionCount& f : p.functions.functions) {
    f.share = static_cast<double>(f.samples) / static_cast<double>(p.functions.samples);
  }
  return p;
}

}  // namespace profcollect
