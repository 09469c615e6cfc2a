// JSON text of the files and reports profcollect writes (meta.json, collection.json,
// `report --json`). Their strings come from outside -- file paths from MMAP records, function
// names from symbol tables and fdata files, event names from perf.data -- and are bytes, not
// necessarily UTF-8, which nlohmann::json refuses to write (it throws type_error 316). Here an
// invalid byte becomes U+FFFD instead, so that one odd path never costs a profile or a report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace profcollect {

// Indented by two spaces, without a final newline.
inline std::string json_text(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}
inline std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace profcollect
