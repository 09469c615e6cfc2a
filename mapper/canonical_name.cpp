#include "mapper/canonical_name.h"

namespace profcollect {

std::string_view canonical_function_name(std::string_view name) {
  // Most names have no suffix at all: one scan for a dot, not one per suffix and position.
  if (name.find('.') == std::string_view::npos) return name;
  // Order matters: ".llvm." is appended after ".part.", so it is removed first.
  for (std::string_view suffix : {std::string_view(".llvm."), std::string_view(".part.")}) {
    const size_t at = name.rfind(suffix);
    if (at == std::string_view::npos) continue;
    // Only when the suffix's own trailing dot is the last dot of the name.
    if (name.rfind('.') == at + suffix.size() - 1) name = name.substr(0, at);
  }
  return name;
}

}  // namespace profcollect
