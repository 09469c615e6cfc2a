#include "mapper/bolted_binary.h"

#include <vector>

namespace profcollect {

const char* to_string(BatStatus status) {
  switch (status) {
    case BatStatus::NotBolted:
      return "not_bolted";
    case BatStatus::Translated:
      return "translated";
    case BatStatus::NoTable:
      return "no_table";
    case BatStatus::Unreadable:
      return "unreadable";
  }
  return "unknown";
}

namespace {

// BOLT leaves a note of its own (.note.bolt_info) and keeps the sections it replaced as
// .bolt.org.<name>; either says that BOLT wrote the file.
bool written_by_bolt(const ElfBinary& binary) {
  for (const ElfSection& s : binary.sections()) {
    if (s.name == ".note.bolt_info" || s.name == BoltAddressTranslation::kSectionName ||
        s.name.starts_with(".bolt.org."))
      return true;
  }
  return false;
}

}  // namespace

BoltedBinary BoltedBinary::inspect(const ElfBinary& binary) {
  BoltedBinary out;
  if (!written_by_bolt(binary)) return out;
  if (!binary.build_id().empty()) {
    // "BOLT-INFO: patched build-id (flipped last bit)".
    std::vector<uint8_t> id(binary.build_id().bytes().begin(), binary.build_id().bytes().end());
    id.back() ^= 1u;
    out.input_build_id_ = BuildId(id);
  }
  try {
    out.table_ = BoltAddressTranslation::load(binary);
  } catch (const BatError& e) {
    out.status_ = BatStatus::Unreadable;
    out.reason_ = std::string("its BOLT address translation (") +
                  BoltAddressTranslation::kSectionName + ") is unreadable: " + e.what();
    return out;
  }
  if (!out.table_) {
    out.status_ = BatStatus::NoTable;
    out.reason_ = std::string("BOLT wrote it without an address translation (") +
                  BoltAddressTranslation::kSectionName +
                  ", llvm-bolt --enable-bat): its profile is of the BOLTed layout";
    return out;
  }
  out.status_ = BatStatus::Translated;
  return out;
}

BatLocation BoltedBinary::locate(const SymbolTable& symbols, uint64_t vaddr,
                                 bool branch_source) const {
  BatLocation at;
  at.function = symbols.find(vaddr);
  if (at.function == nullptr) return at;
  at.named = at.function;
  at.offset = vaddr - at.function->addr;
  if (!table_) return at;
  at.fragment = table_->fragment(at.function->addr);
  if (at.fragment == nullptr) return at;
  at.offset = BoltAddressTranslation::translate(*at.fragment, at.offset, branch_source);
  if (at.fragment->cold) {
    // perf2bolt takes the function holding the hot address, as we do.
    if (const FunctionSymbol* hot = symbols.find(at.fragment->hot_address)) at.named = hot;
  }
  return at;
}

const std::string& BoltedBinary::profile_name(const FunctionSymbol& function) {
  auto with_file = [](const std::string& name) {
    const size_t slash = name.find('/');
    return slash != std::string::npos && name.find('/', slash + 1) != std::string::npos;
  };
  if (with_file(function.name)) return function.name;
  for (const std::string& alias : function.aliases) {
    if (with_file(alias)) return alias;
  }
  return function.name;
}

}  // namespace profcollect
