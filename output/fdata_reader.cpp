#include "output/fdata_reader.h"

#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "output/text_lines.h"

namespace profcollect {

std::string_view after_bolted_collection(std::string_view text, bool* bolted) {
  const bool has = text.starts_with(kBoltedCollectionLine) &&
                   text.size() > kBoltedCollectionLine.size() &&
                   text[kBoltedCollectionLine.size()] == '\n';
  if (bolted) *bolted = has;
  return has ? text.substr(kBoltedCollectionLine.size() + 1) : text;
}

bool is_no_lbr_fdata(std::string_view text) {
  return after_bolted_collection(text).starts_with("no_lbr");
}

std::optional<NoLbrFdata> parse_no_lbr_fdata(const std::string& text, std::string* error) {
  NoLbrFdata out;
  bool bolted = false;
  const std::string_view body = after_bolted_collection(text, &bolted);
  out.bolted_collection = bolted;
  std::istringstream in{std::string(body)};
  std::string line;
  size_t line_no = 0;
  auto fail = [&](const std::string& why) -> std::optional<NoLbrFdata> {
    if (error) *error = "line " + std::to_string(line_no) + ": " + why;
    return std::nullopt;
  };
  // Line numbers count the boltedcollection line, as an editor does.
  const size_t first_line = bolted ? 1 : 0;
  line_no = first_line;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    if (line_no == first_line + 1) {
      std::istringstream h(line);
      std::string word;
      h >> word;
      if (word != "no_lbr") return fail("not a no_lbr fdata header");
      while (h >> word) out.events.push_back(word);
      continue;
    }
    // "1 <name with \-escapes> <hex offset> <count>": the name may hold escaped spaces, so take
    // the two numbers from the end.
    if (line.size() < 2 || line[0] != '1' || line[1] != ' ')
      return fail("expected '1 <name> <offset> <count>'");
    size_t last = line.rfind(' ');
    if (last == std::string::npos || last < 2) return fail("missing count");
    size_t mid = line.rfind(' ', last - 1);
    if (mid == std::string::npos || mid < 2) return fail("missing offset");
    std::string name = line.substr(2, mid - 2);
    std::string off_s = line.substr(mid + 1, last - mid - 1), cnt_s = line.substr(last + 1);
    uint64_t offset = 0, count = 0;
    if (!parse_whole_number(off_s, 16, offset)) return fail("bad offset '" + off_s + "'");
    if (!parse_whole_number(cnt_s, 10, count)) return fail("bad count '" + cnt_s + "'");
    out.counts[{name, offset}] += count;
  }
  if (line_no == first_line) return fail("empty file");
  return out;
}

std::string format_no_lbr_fdata(const NoLbrFdata& fdata) {
  std::string out;
  if (fdata.bolted_collection) (out += kBoltedCollectionLine) += '\n';
  out += "no_lbr";
  for (const auto& e : fdata.events) out += " " + e;
  out += '\n';
  char buf[64];
  for (const auto& [key, count] : fdata.counts) {
    out += "1 ";
    out += key.first;
    std::snprintf(buf, sizeof buf, " %" PRIx64 " %" PRIu64 "\n", key.second, count);
    out += buf;
  }
  return out;
}

}  // namespace profcollect
