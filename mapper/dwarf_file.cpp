#include "mapper/dwarf_file.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

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

// libdwfl asks where each section a DWARF relocation refers to is: where ElfBinary put it. The
// module's userdata is the ElfBinary of the file being relocated.
int section_address(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char* name,
                    GElf_Word index, const GElf_Shdr*, Dwarf_Addr* address) {
  const auto* file = static_cast<const ElfBinary*>(*userdata);
  if (file == nullptr || name == nullptr || index >= file->sections().size() ||
      file->sections()[index].name != name) {
    *address = static_cast<Dwarf_Addr>(-1);  // libdwfl: the section is not placed
    return 0;
  }
  *address = file->sections()[index].addr;
  return 0;
}

// No search: the file given holds the DWARF (DwarfFile found it).
int no_debuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*, GElf_Word,
                 char**) {
  return -1;
}

const Dwfl_Callbacks kRelocatingCallbacks = {
    .find_elf = nullptr,
    .find_debuginfo = no_debuginfo,
    .section_address = section_address,
    .debuginfo_path = nullptr,
};

}  // namespace

const char* to_string(DwarfSource source) {
  switch (source) {
    case DwarfSource::Binary:
      return "binary";
    case DwarfSource::BuildIdFile:
      return "build-id debug file";
    case DwarfSource::DebuglinkFile:
      return ".gnu_debuglink debug file";
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
  if (result->file_->elf_type() == ET_REL) {
    result->open_relocated();
    return result;
  }
  result->dwarf_ = dwarf_begin_elf(result->file_->elf(), DWARF_C_READ, nullptr);
  if (result->dwarf_ == nullptr) {
    throw DebugInfoError(DebugInfoError::Kind::Unreadable,
                         result->file_->path() + ": cannot read its DWARF: " + dwarf_errmsg(-1));
  }
  return result;
}

std::unique_ptr<DwarfFile> DwarfFile::reopen() const {
  if (dwfl_ != nullptr) return nullptr;
  std::shared_ptr<const ElfBinary> again;
  try {
    again = ElfBinary::open(file_->path());
  } catch (const std::exception&) {
    return nullptr;
  }
  if (again->file_size() != file_->file_size() || !(again->build_id() == file_->build_id()))
    return nullptr;
  Dwarf* dwarf = dwarf_begin_elf(again->elf(), DWARF_C_READ, nullptr);
  if (dwarf == nullptr) return nullptr;
  std::unique_ptr<DwarfFile> result(new DwarfFile());
  result->binary_ = binary_;
  result->file_ = std::move(again);
  result->source_ = source_;
  result->dwarf_ = dwarf;
  return result;
}

void DwarfFile::open_relocated() {
  const std::string& path = file_->path();
  auto fail = [&path](const char* what) {
    // libdwfl passes on libdw's message, which is none when libdw recorded no error.
    const char* why = dwfl_errmsg(-1);
    throw DebugInfoError(DebugInfoError::Kind::Unreadable,
                         path + ": cannot relocate its DWARF (" + what +
                             "): " + (why != nullptr ? why : "no reason given"));
  };
  dwfl_ = dwfl_begin(&kRelocatingCallbacks);
  if (dwfl_ == nullptr) fail("dwfl_begin");
  // libdwfl takes the descriptor (and closes it with the session).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("open");
  dwfl_report_begin(dwfl_);
  Dwfl_Module* module = dwfl_report_offline(dwfl_, path.c_str(), path.c_str(), fd);
  if (module == nullptr) fail("dwfl_report_offline");
  if (dwfl_report_end(dwfl_, nullptr, nullptr) != 0) fail("dwfl_report_end");
  void** userdata = nullptr;
  dwfl_module_info(module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  *userdata = const_cast<ElfBinary*>(file_.get());
  Dwarf_Addr bias = 0;
  dwarf_ = dwfl_module_getdwarf(module, &bias);
  if (dwarf_ == nullptr) fail("dwfl_module_getdwarf");
}

Elf* DwarfFile::elf() const { return dwarf_getelf(dwarf_); }

DwarfFile::~DwarfFile() {
  if (dwfl_ != nullptr) {
    dwfl_end(dwfl_);
  } else if (dwarf_ != nullptr) {
    dwarf_end(dwarf_);
  }
}

}  // namespace profcollect
