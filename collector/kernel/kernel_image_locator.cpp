#include "collector/kernel/kernel_image_locator.h"

#include <sys/stat.h>
#include <sys/utsname.h>

#include "mapper/elf_binary.h"

namespace profcollect {

std::vector<std::string> kernel_image_candidates(const std::string& release) {
  return {"/usr/lib/debug/boot/vmlinux-" + release, "/lib/modules/" + release + "/build/vmlinux",
          "/boot/vmlinux-" + release};
}

std::string running_kernel_release() {
  struct utsname u {};
  if (::uname(&u) != 0) return "";
  return u.release;
}

namespace {

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string id_text(const BuildId& id) { return id.empty() ? "none" : id.to_hex(); }

}  // namespace

KernelImage locate_kernel_image(const KernelImageSettings& settings) {
  KernelImage out;
  out.running = read_kernel_build_id(settings.notes_path);
  if (!out.running) {
    out.notes.push_back("the running kernel's build-id is unknown (" + settings.notes_path +
                        " gives none): a vmlinux cannot be checked against it");
  }
  if (settings.vmlinux) {
    const std::string& path = *settings.vmlinux;
    if (!is_regular_file(path)) throw SettingError("{vmlinux} " + path + ": not a regular file");
    std::shared_ptr<const ElfBinary> elf;
    try {
      elf = ElfBinary::open(path);
    } catch (const std::exception& e) {
      throw SettingError("{vmlinux} " + path + ": " + e.what());
    }
    if (out.running && !(elf->build_id() == *out.running)) {
      throw KernelImageMismatch("{vmlinux} " + path +
                                " is not the running kernel: its build-id is " +
                                id_text(elf->build_id()) + ", the running kernel's (" +
                                settings.notes_path + ") is " + out.running->to_hex());
    }
    out.path = path;
    out.build_id = elf->build_id();
    return out;
  }
  const std::string release =
      settings.release.empty() ? running_kernel_release() : settings.release;
  const std::vector<std::string> candidates =
      settings.candidates.empty() ? kernel_image_candidates(release) : settings.candidates;
  for (const std::string& path : candidates) {
    if (!is_regular_file(path)) continue;
    std::shared_ptr<const ElfBinary> elf;
    try {
      elf = ElfBinary::open(path);
    } catch (const std::exception& e) {
      out.notes.push_back(path + " passed over: " + e.what());
      continue;
    }
    if (out.running && !(elf->build_id() == *out.running)) {
      out.notes.push_back(path + " passed over: its build-id is " + id_text(elf->build_id()) +
                          ", the running kernel's is " + out.running->to_hex());
      continue;
    }
    out.path = path;
    out.build_id = elf->build_id();
    return out;
  }
  std::string looked;
  for (const std::string& c : candidates) looked += (looked.empty() ? "" : ", ") + c;
  out.notes.push_back("no vmlinux of the running kernel found (looked at " + looked + ")");
  return out;
}

}  // namespace profcollect
