#include "mapper/image_kind.h"

namespace profcollect {

bool is_anonymous_path(std::string_view p) {
  return p.starts_with("//anon") || p.starts_with("[anon") || p.starts_with("/memfd:") ||
         p == "[heap]" || p.starts_with("[stack") || p.starts_with("/dev/zero") ||
         p.starts_with("/SYSV") || p.starts_with("/tmp/perf-") || p.starts_with("//") || p.empty();
}

bool is_perf_map_memory(std::string_view p) {
  return p.starts_with("//anon") || p.starts_with("/dev/zero") || p.starts_with("/anon_hugepage") ||
         p.starts_with("[stack") || p.starts_with("/SYSV") || p == "[heap]";
}

std::string perf_map_name(uint32_t pid) { return "/tmp/perf-" + std::to_string(pid) + ".map"; }

ImageKind classify_image(const Dso& dso) {
  if (dso.kernel) {
    // The kernel's MMAP records name the image "[kernel.kallsyms]_text" (or "_stext"); every
    // other kernel mapping is a module, named by its path or "[name]".
    return dso.path.starts_with("[kernel.kallsyms]") ||
                   dso.path.starts_with("[guest.kernel.kallsyms")
               ? ImageKind::Kernel
               : ImageKind::KernelModule;
  }
  if (is_anonymous_path(dso.path)) return ImageKind::Anonymous;
  if (dso.path.starts_with("[")) return ImageKind::Special;
  return ImageKind::UserFile;
}

std::string dso_display_name(const Dso& dso) {
  std::string_view p = dso.path;
  if (dso.kernel) {
    if (p.starts_with("[kernel.kallsyms]")) return "[kernel.kallsyms]";
    if (p.starts_with("[")) return std::string(p);
    // A module: perf shows "[name]" (report shows its path where perf would, see there).
    return "[" + module_name(p) + "]";
  }
  return std::string(p);
}

std::string module_name(std::string_view p) {
  if (p.size() >= 2 && p.front() == '[' && p.back() == ']') p = p.substr(1, p.size() - 2);
  auto slash = p.rfind('/');
  std::string name(slash == std::string_view::npos ? p : p.substr(slash + 1));
  auto dot = name.find(".ko");
  if (dot != std::string::npos) name.resize(dot);
  for (auto& c : name)
    if (c == '-') c = '_';
  return name;
}

}  // namespace profcollect
