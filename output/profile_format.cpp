#include "output/profile_format.h"

#include <sstream>

namespace profcollect {

// The entries, each defined in its format's own file (output/format_NAME.cpp).
extern const FormatSpec kBoltFormat;
extern const FormatSpec kPreaggFormat;
extern const FormatSpec kBoltInferredFormat;
extern const FormatSpec kAutofdoFormat;
extern const FormatSpec kUnsymbolizedFormat;
extern const FormatSpec kPropellerFormat;

const std::vector<ProfileFormat>& profile_formats() {
  static const std::vector<ProfileFormat> formats = {
      &kBoltFormat,    &kPreaggFormat,       &kBoltInferredFormat,
      &kAutofdoFormat, &kUnsymbolizedFormat, &kPropellerFormat,
  };
  return formats;
}

ProfileFormat find_format(std::string_view name) {
  for (ProfileFormat f : profile_formats()) {
    if (f->name == name) return f;
  }
  return nullptr;
}

ProfileFormat format_named(std::string_view name) {
  if (ProfileFormat f = find_format(name)) return f;
  throw std::logic_error("no profile format named " + std::string(name));
}

std::string format_names(bool kernel) {
  std::string out;
  for (ProfileFormat f : profile_formats()) {
    if (kernel && !f->kernel) continue;
    if (!out.empty()) out += ", ";
    out += f->name;
  }
  return out;
}

std::vector<ProfileFormat> parse_format_list(const std::string& list, bool kernel) {
  std::vector<ProfileFormat> out;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    ProfileFormat f = find_format(name);
    if (!f || (kernel && !f->kernel)) {
      throw FormatListError(
          "{format}: " + (name.empty() ? std::string("an empty name") : "'" + name + "'") +
          " is not one of " + format_names(kernel));
    }
    bool listed = false;
    for (ProfileFormat g : out) listed = listed || g == f;
    if (!listed) out.push_back(f);
  }
  if (out.empty()) throw FormatListError("{format}: name at least one of " + format_names(kernel));
  return out;
}

std::vector<ProfileFormat> live_default_formats() {
  std::vector<ProfileFormat> out;
  for (ProfileFormat f : profile_formats()) {
    if (f->live_default) out.push_back(f);
  }
  return out;
}

}  // namespace profcollect
