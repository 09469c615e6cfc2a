#include "mapper/dwarf_file.h"

#include "mapper/debug_info_error.h"
#include "mapper/elf_symbols.h"

namespace profcollect {

namespace {

bool has_section_data(const ElfBinary& file, const char* name) {
  const ElfSection* section = file.section_by_name(name);
  return section != nullptr && section->has_file_data() && section->size > 0;
}

std::string no_debug_info_message(const ElfBinary& binary,
                                  const std::vector<std::string>& debug_dirs) {
  std::string message = binary.path() + ": no DWARF debug information (build-id ";
  message += binary.build_id().empty() ? std::string("none") : binary.build_id().to_hex();
  message += ")";
  const bool stripped = !has_symbol_table(binary, SymbolTableKind::Static);
  message += stripped ? "; the binary is stripped and has no .debug_info"
                      : "; the binary has no .debug_info";
  const std::vector<std::string> searched = debug_file_candidates(binary, debug_dirs);
  if (searched.empty()) {
    message += ", and it has neither a build-id nor a .gnu_debuglink to find a debug file by";
  } else {
    message += "; looked for a debug file in:";
    for (const std::string& path : searched) message += " " + path;
  }
  message +=
      ". AutoFDO needs line tables: rebuild with -g (or -gline-tables-only "
      "-fdebug-info-for-profiling), install the binary's debug file (e.g. its -dbgsym/-debuginfo "
      "package) or pass --debug-dir DIR with DIR/.build-id/xx/rest.debug";
  return message;
}

}  // namespace

const char* to_string(DwarfSource source) {
  switch (source) {
    case DwarfSource::Binary: return "binary";
    case DwarfSource::BuildIdFile: return "build-id debug file";
    case DwarfSource::DebuglinkFile: return ".gnu_debuglink debug file";
  }
  return "?";
}

bool has_dwarf(const ElfBinary& file) {
  return has_section_data(file, ".debug_info") || has_section_data(file, ".zdebug_info");
}

std::unique_ptr<DwarfFile> DwarfFile::open(std::shared_ptr<const ElfBinary> binary,
                                           const std::vector<std::string>& debug_dirs) {
  std::unique_ptr<DwarfFile> result(new DwarfFile());
  result->binary_ = binary;
  if (has_dwarf(*binary)) {
    result->file_ = binary;
    result->source_ = DwarfSource::Binary;
  } else {
    std::optional<DebugFile> found = locate_debug_file(*binary, debug_dirs, has_dwarf);
    if (!found) {
      throw DebugInfoError(DebugInfoError::Kind::NoDebugInfo,
                           no_debug_info_message(*binary, debug_dirs));
    }
    result->file_ = found->elf;
    result->source_ = found->found_by == DebugFileLink::BuildId ? DwarfSource::BuildIdFile
                                                                 : DwarfSource::DebuglinkFile;
  }
  result->dwarf_ = dwarf_begin_elf(result->file_->elf(), DWARF_C_READ, nullptr);
  if (result->dwarf_ == nullptr) {
    throw DebugInfoError(DebugInfoError::Kind::Unreadable,
                         result->file_->path() + ": cannot read its DWARF: " + dwarf_errmsg(-1));
  }
  return result;
}

DwarfFile::~DwarfFile() {
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
}

}  // namespace profcollect
