#include "collector/kernel/kernel_notes.h"

#include <elf.h>

#include <cstdint>
#include <cstring>

#include "collector/host/proc_files.h"

namespace profcollect {

namespace {

uint32_t word_at(std::string_view s, size_t at) {
  uint32_t w;
  std::memcpy(&w, s.data() + at, sizeof w);
  return w;
}

size_t padded(uint32_t n) { return (static_cast<size_t>(n) + 3) & ~size_t{3}; }

}  // namespace

std::optional<BuildId> build_id_from_notes(std::string_view notes) {
  size_t at = 0;
  while (notes.size() - at >= 12) {
    const uint32_t namesz = word_at(notes, at), descsz = word_at(notes, at + 4),
                   type = word_at(notes, at + 8);
    at += 12;
    const size_t name_room = padded(namesz), desc_room = padded(descsz);
    if (name_room > notes.size() - at || desc_room > notes.size() - at - name_room)
      return std::nullopt;
    const std::string_view name = notes.substr(at, namesz);
    const std::string_view desc = notes.substr(at + name_room, descsz);
    at += name_room + desc_room;
    // The name is "GNU" with its terminating NUL (namesz 4).
    if (type == NT_GNU_BUILD_ID && namesz == 4 && name == std::string_view("GNU\0", 4) &&
        descsz > 0 && descsz <= BuildId::kMaxSize) {
      return BuildId(std::span(reinterpret_cast<const uint8_t*>(desc.data()), desc.size()));
    }
  }
  return std::nullopt;
}

std::optional<BuildId> read_kernel_build_id(const std::string& notes_path) {
  std::string bytes;
  if (!read_whole_file(notes_path, bytes)) return std::nullopt;
  return build_id_from_notes(bytes);
}

}  // namespace profcollect
