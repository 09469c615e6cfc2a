// How a runtime address becomes an address in the image, chosen by the kind of image (the model
// is simpleperf's Dso::IpToVaddrInFile, one rule per kind of Dso):
//
// - a user ELF file: the exec-segment rule (mapper/exec_segment_map.h) on the file offset
//   A - mapping.start + mapping.pgoff;
// - the kernel image (vmlinux): the slide of its reference symbol. perf names the kernel's
//   mapping "[kernel.kallsyms]_text" (or "_stext") and sets its pgoff to that symbol's runtime
//   address, so vaddr = A - pgoff + the symbol's value in vmlinux; the result must lie in an
//   executable PT_LOAD;
// - a kernel module (.ko, ET_REL: no PT_LOAD, every section at address 0 in the file): its
//   executable sections are its segments. Each is placed at an offset from the start of the
//   module's mapping, given as data (/sys/module/NAME/sections/*, or a kallsyms symbol matched
//   against the .ko's symbol of that name), else .text at the start of the mapping, as perf
//   assumes; vaddr = (A - mapping.start + mapping.pgoff) - section offset + the section's
//   address in the module's image (mapper/relocatable_layout.h: the addresses its symbols and
//   relocated DWARF have too), and the section's index goes with it.
//
// Anonymous and JIT memory has no image and no translator. Everything a translation needs is
// computed when the image is opened; translate() allocates nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mapper/elf_binary.h"
#include "mapper/exec_segment_map.h"
#include "mapper/image_kind.h"
#include "mapper/process_table.h"

namespace profcollect {

struct ImageAddress {
  uint64_t vaddr = 0;
  // The ELF section holding vaddr, for a kernel module (vaddr less that section's image
  // address is the section-relative address nm and the .ko's st_value speak of); 0 for every
  // other image.
  uint32_t section = 0;
};

// Where a module's sections were at run time: each section's address and the start of the
// module's memory read at the same moment (/proc/modules, or the start of the module's MMAP
// record). Only the differences are kept, so a module loaded again elsewhere still translates.
struct ModuleLayout {
  struct Section {
    std::string name;      // ".text", ".text.unlikely", ".init.text", ...
    uint64_t address = 0;  // at run time (/sys/module/NAME/sections/NAME)
  };
  uint64_t start = 0;
  std::vector<Section> sections;
};

// The runtime address of a module's section found as simpleperf finds it: the section holding
// `symbol` in the .ko, placed so that the symbol lands on `runtime_address` (its address in
// /proc/kallsyms). Nullopt when the .ko has no such defined symbol.
std::optional<ModuleLayout::Section> module_section_of_symbol(const ElfBinary& ko,
                                                              std::string_view symbol,
                                                              uint64_t runtime_address);

struct RuntimeSymbol {
  std::string_view name;
  uint64_t address = 0;
};

// Every section of the .ko that the module's symbols at run time (its /proc/kallsyms lines) place:
// a symbol places the section defining it when its name is defined once in the .ko and appears
// once at run time (two static functions of one name could be swapped), and a section is placed
// only when all such symbols agree on its address (else it is left out, not guessed).
std::vector<ModuleLayout::Section> module_sections_of_symbols(
    const ElfBinary& ko, const std::vector<RuntimeSymbol>& runtime);

class ImageTranslator {
 public:
  // No image: nothing translates (anonymous or JIT memory).
  ImageTranslator() = default;

  // The kind of image the file is, and its rule: an ET_REL file is a kernel module (.text at
  // the start of its mapping); an ET_EXEC file linked in the upper half of the address space
  // with a `_text` or `_stext` symbol is a kernel image; everything else a user ELF file.
  static ImageTranslator for_file(const ElfBinary& elf);
  static ImageTranslator user_file(const ElfBinary& elf);
  static ImageTranslator kernel(const ElfBinary& vmlinux);
  static ImageTranslator kernel_module(const ElfBinary& ko, const ModuleLayout& layout = {});

  // The address in the image of `addr`, which lies in `mapping` of the mapped file `dso`;
  // nullopt when no executable part of the image holds it.
  std::optional<ImageAddress> translate(const Mapping& mapping, const Dso& dso,
                                        uint64_t addr) const;

  // The addresses of `mapping` around `addr` that translate as it does: [begin, end), each to
  // itself + delta (modulo 2^64) in `section`. A caller translating many addresses at once (a
  // branch stack's ends) keeps the run and shifts the rest that fall in it.
  struct Run {
    uint64_t begin = 0, end = 0, delta = 0;
    uint32_t section = 0;
  };
  // Nullopt exactly when translate() gives nullopt.
  std::optional<Run> translate_run(const Mapping& mapping, const Dso& dso, uint64_t addr) const;

  ImageKind kind() const { return kind_; }
  // Nothing executable to translate into (no PF_X segment, no placed executable section, no
  // reference symbol).
  bool empty() const;
  // The executable PT_LOADs (user files and kernel images; empty for modules).
  const ExecSegmentMap& segments() const { return segments_; }

 private:
  struct PlacedSection {
    uint64_t offset = 0;  // from the start of the module's mapping
    uint64_t size = 0;
    uint64_t addr = 0;  // the section's image address (mapper/relocatable_layout.h)
    uint32_t index = 0;
  };

  ImageKind kind_ = ImageKind::Anonymous;
  ExecSegmentMap segments_;
  // Kernel image: the values of perf's reference symbols in vmlinux.
  std::optional<uint64_t> text_, stext_;
  std::vector<PlacedSection> sections_;  // kernel module, sorted by offset
};

}  // namespace profcollect
