// The ELF file that holds a binary's DWARF, opened with libdw: the binary itself when it has
// .debug_info, else its separate debug file found by build-id or .gnu_debuglink under the debug
// directories (mapper/debug_file_locator.h has the search order).
//
// An ET_REL file's DWARF (a kernel module's) refers to its sections through relocations
// (.rela.debug_info, .rela.debug_line, ...): it is opened through libdwfl, which applies them
// (dwfl_report_offline, dwfl_module_getdwarf), with every section placed at the address
// ElfBinary gives it (mapper/relocatable_layout.h), so DWARF addresses are the module's image
// addresses. The relocated sections then live in libdwfl's own ELF handle: read the DWARF's
// bytes through elf() below, never through file().elf().
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <memory>
#include <string>
#include <vector>

#include "mapper/debug_file_locator.h"
#include "mapper/elf_binary.h"

namespace profcollect {

enum class DwarfSource { Binary, BuildIdFile, DebuglinkFile };

const char* to_string(DwarfSource source);

class DwarfFile {
 public:
  // Throws DebugInfoError (NoDebugInfo, naming the build-id and every path searched; Unreadable).
  static std::unique_ptr<DwarfFile> open(std::shared_ptr<const ElfBinary> binary,
                                         const std::vector<std::string>& debug_dirs);
  ~DwarfFile();
  DwarfFile(const DwarfFile&) = delete;
  DwarfFile& operator=(const DwarfFile&) = delete;

  // Another handle on the same files, with its own mapping and libdw state (for a second
  // thread), or nullptr: for a relocated ET_REL file, or when the file cannot be opened again as
  // the same build (its build-id and size).
  std::unique_ptr<DwarfFile> reopen() const;

  Dwarf* dwarf() const { return dwarf_; }
  // The ELF handle the DWARF sections are read from (relocated for an ET_REL file).
  struct ::Elf* elf() const;
  const ElfBinary& binary() const { return *binary_; }
  const ElfBinary& file() const { return *file_; }  // the file the DWARF is read from
  DwarfSource source() const { return source_; }

 private:
  DwarfFile() = default;
  void open_relocated();

  std::shared_ptr<const ElfBinary> binary_;
  std::shared_ptr<const ElfBinary> file_;
  DwarfSource source_ = DwarfSource::Binary;
  Dwarf* dwarf_ = nullptr;  // owned unless dwfl_ is set (then libdwfl's)
  Dwfl* dwfl_ = nullptr;    // an ET_REL file's relocating session
};

// Whether the file has DWARF debug information sections with contents (not NOBITS).
bool has_dwarf(const ElfBinary& file);

}  // namespace profcollect
