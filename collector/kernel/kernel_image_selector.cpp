#include "collector/kernel/kernel_image_selector.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "collector/host/proc_files.h"
#include "mapper/image_kind.h"

namespace profcollect {

namespace fs = std::filesystem;

KernelImageSelector::KernelImageSelector(KernelImageSelection selection)
    : selection_(std::move(selection)) {
  if (!selection_.vmlinux.empty())
    kernel_ = LoadedImage::open_file(selection_.vmlinux, selection_.load_options);
}

std::optional<std::string> KernelImageSelector::find_module_file(const std::string& name) const {
  if (!selection_.modules_dir) return std::nullopt;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(*selection_.modules_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string file = it->path().filename().string();
    if ((file.ends_with(".ko") || file.ends_with(".ko.debug")) && module_name(file) == name)
      return it->path().string();
  }
  return std::nullopt;
}

ImageChoice KernelImageSelector::choose(uint32_t, const Mapping& mapping, const Dso& dso) {
  ImageChoice c;
  if (!dso.kernel) return c;
  const ImageKind kind = classify_image(dso);
  if (kind == ImageKind::Kernel) {
    if (!kernel_) return c;
    c.verdict = ImageChoice::Verdict::Selected;
    c.image = kernel_;
    return c;
  }
  if (kind != ImageKind::KernelModule) return c;
  const std::string name = module_name(dso.path);
  const std::optional<std::string> file = find_module_file(name);
  if (!file) return c;
  try {
    std::shared_ptr<const ElfBinary> ko = ElfBinary::open(*file);
    // Where each section of the module is now: /sys/module/NAME/sections/SECTION holds its address.
    ModuleLayout layout;
    layout.start = mapping.start;
    std::error_code ec;
    const fs::path sections = fs::path(selection_.sys_module) / name / "sections";
    for (fs::directory_iterator it(sections, ec), end; !ec && it != end; it.increment(ec)) {
      std::string line;
      if (!read_first_line(it->path().string(), line)) continue;
      char* stop = nullptr;
      const uint64_t address = std::strtoull(line.c_str(), &stop, 16);
      if (stop == line.c_str() || address < mapping.start) continue;
      layout.sections.push_back({it->path().filename().string(), address});
    }
    // Executable sections /sys/module did not place: by the module's symbols in kallsyms.
    bool by_kallsyms = false;
    std::vector<RuntimeSymbol> runtime;
    for (const KernelSymbol& k : selection_.kallsyms) {
      if (k.module == name && k.address >= mapping.start) runtime.push_back({k.name, k.address});
    }
    for (ModuleLayout::Section& placed : module_sections_of_symbols(*ko, runtime)) {
      const bool known =
          std::any_of(layout.sections.begin(), layout.sections.end(),
                      [&](const ModuleLayout::Section& s) { return s.name == placed.name; });
      if (known) continue;
      layout.sections.push_back(std::move(placed));
      by_kallsyms = true;
    }
    if (by_kallsyms) placed_by_kallsyms_.push_back(name);
    BinaryIdentity identity;
    identity.path = *file;
    identity.build_id = ko->build_id();
    ImageTranslator translator = ImageTranslator::kernel_module(*ko, layout);
    c.image = std::make_shared<LoadedImage>(std::move(ko), identity, selection_.load_options,
                                            std::move(translator));
    c.verdict = ImageChoice::Verdict::Selected;
    modules_found_.push_back(name);
  } catch (const std::exception& e) {
    c.verdict = ImageChoice::Verdict::Unreadable;
    c.why = *file + ": " + e.what();
  }
  return c;
}

}  // namespace profcollect
