#include "mapper/debug_file_locator.h"

#include <sys/stat.h>

#include <array>
#include <filesystem>
#include <fstream>

namespace profcollect {

namespace {

namespace fs = std::filesystem;

std::string build_id_path(const std::string& dir, const BuildId& id) {
  const std::string hex = id.to_hex();
  return dir + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
}

// The binary's directory, absolute; symlinks resolved so the debuglink search looks beside
// the real file, as gdb does.
std::string binary_directory(const std::string& path) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) real = fs::absolute(path, ec);
  return real.parent_path().string();
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

const std::array<uint32_t, 256>& crc_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

}  // namespace

std::optional<uint32_t> file_crc32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  const auto& table = crc_table();
  uint32_t crc = 0xffffffffu;
  std::array<char, 1 << 16> buf;
  while (in) {
    in.read(buf.data(), buf.size());
    const std::streamsize n = in.gcount();
    for (std::streamsize i = 0; i < n; ++i) {
      crc = table[(crc ^ static_cast<uint8_t>(buf[i])) & 0xff] ^ (crc >> 8);
    }
  }
  if (in.bad()) return std::nullopt;
  return crc ^ 0xffffffffu;
}

std::vector<std::string> debug_file_candidates(const ElfBinary& binary,
                                               const std::vector<std::string>& debug_dirs) {
  std::vector<std::string> paths;
  if (!binary.build_id().empty()) {
    for (const std::string& dir : debug_dirs)
      paths.push_back(build_id_path(dir, binary.build_id()));
  }
  const std::string link = binary.debuglink();
  if (!link.empty()) {
    const std::string dir = binary_directory(binary.path());
    paths.push_back(dir + "/" + link);
    paths.push_back(dir + "/.debug/" + link);
    for (const std::string& debug_dir : debug_dirs) paths.push_back(debug_dir + dir + "/" + link);
  }
  return paths;
}

std::optional<DebugFile> locate_debug_file(const ElfBinary& binary,
                                           const std::vector<std::string>& debug_dirs,
                                           const std::function<bool(const ElfBinary&)>& usable) {
  const size_t by_build_id = binary.build_id().empty() ? 0 : debug_dirs.size();
  const std::vector<std::string> candidates = debug_file_candidates(binary, debug_dirs);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& path = candidates[i];
    std::error_code ec;
    if (!fs::is_regular_file(path, ec) || same_file(path, binary.path())) continue;
    std::shared_ptr<const ElfBinary> elf;
    try {
      elf = ElfBinary::open(path);
    } catch (const ElfError&) {
      continue;  // a broken candidate is no reason to stop looking
    }
    const bool found_by_build_id = i < by_build_id;
    if (found_by_build_id) {
      if (!(elf->build_id() == binary.build_id())) continue;
    } else {
      if (!elf->build_id().empty() && !binary.build_id().empty() &&
          !(elf->build_id() == binary.build_id())) {
        continue;
      }
      std::optional<uint32_t> crc = file_crc32(path);
      if (!crc || *crc != binary.debuglink_crc()) continue;
    }
    if (!usable(*elf)) continue;
    return DebugFile{std::move(elf),
                     found_by_build_id ? DebugFileLink::BuildId : DebugFileLink::Debuglink};
  }
  return std::nullopt;
}

}  // namespace profcollect
