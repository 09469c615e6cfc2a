#include "output/fdata_writer.h"

namespace profcollect {

std::string FdataWriter::escape_name(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == ' ' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

NoLbrFdata FdataWriter::to_no_lbr(const FunctionProfile& profile,
                                  const std::vector<std::string>& events) {
  NoLbrFdata out;
  out.bolted_collection = profile.translated;
  for (const auto& e : events) out.events.push_back(e.empty() || e.back() != ':' ? e + ":" : e);
  // Equal (name, offset) pairs cannot come from one symbol table, but if they did BOLT would
  // add them up when reading: so do we.
  for (const auto& s : profile.samples) {
    const std::string& name =
        profile.translated ? BoltedBinary::profile_name(*s.function) : s.function->name;
    out.counts[{escape_name(name), s.offset}] += s.count;
  }
  return out;
}

std::string FdataWriter::no_lbr(const FunctionProfile& profile,
                                const std::vector<std::string>& events) {
  return format_no_lbr_fdata(to_no_lbr(profile, events));
}

}  // namespace profcollect
