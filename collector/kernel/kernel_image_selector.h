// The selector of a kernel profile: the kernel's mapping gets the vmlinux (when one of the
// running kernel was found), a module's mapping its .ko when a modules directory holds one of
// that name, placed by the section addresses the running kernel publishes
// (/sys/module/NAME/sections/*), and where those are missing (no /sys, or a section the kernel
// does not list) by the module's symbols in /proc/kallsyms matched against the .ko's, as
// simpleperf places modules; user mappings get nothing (kernel-only samples have none).
// What no image takes is counted by runtime address (SamplePipeline::kernel_addresses).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mapper/image_resolver.h"
#include "mapper/loaded_image.h"
#include "output/kernel_function_summary.h"

namespace profcollect {

struct KernelImageSelection {
  std::string vmlinux;                     // empty: none
  std::optional<std::string> modules_dir;  // searched for NAME.ko (any depth)
  std::string sys_module = "/sys/module";  // NAME/sections/SECTION: runtime section addresses
  std::vector<KernelSymbol>
      kallsyms;  // the running kernel's text symbols (those of modules are used)
  ImageLoadOptions load_options;
};

class KernelImageSelector : public ImageSelector {
 public:
  explicit KernelImageSelector(KernelImageSelection selection);  // throws ElfError for the vmlinux

  ImageChoice choose(uint32_t pid, const Mapping& mapping, const Dso& dso) override;

  const std::shared_ptr<LoadedImage>& kernel() const { return kernel_; }
  // Modules whose .ko was found and opened, by name.
  const std::vector<std::string>& modules_found() const { return modules_found_; }
  // Of those, the modules with sections placed by their kallsyms symbols.
  const std::vector<std::string>& modules_placed_by_kallsyms() const { return placed_by_kallsyms_; }

 private:
  std::optional<std::string> find_module_file(const std::string& name) const;

  KernelImageSelection selection_;
  std::shared_ptr<LoadedImage> kernel_;
  std::vector<std::string> modules_found_;
  std::vector<std::string> placed_by_kallsyms_;
};

}  // namespace profcollect
