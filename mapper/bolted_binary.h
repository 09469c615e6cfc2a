// What BOLT left in a binary it wrote, for profiles of that binary: whether it is BOLTed at all,
// whether its address translation (BAT, mapper/bolt_address_translation.h) can be used, and
// every address of it in the input binary's terms, as perf2bolt 19 names them from BAT.
//
// A profile collected on a BOLTed binary is for the next BOLT run of the input binary, so its
// samples are written in the input's layout: the function is the input function (a cold
// fragment's samples go to the function it was split from), the offset the input offset BAT
// gives. A function BOLT did not rewrite has no table and keeps its offset (it did not move).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mapper/bolt_address_translation.h"
#include "mapper/elf_binary.h"
#include "mapper/symbol_table.h"
#include "record/build_id.h"

namespace profcollect {

enum class BatStatus {
  NotBolted,   // no trace of BOLT: a binary as the compiler wrote it
  Translated,  // BOLTed, with a readable BAT: profiles are of the input binary
  NoTable,     // BOLTed without --enable-bat: profiles are of the BOLTed layout
  Unreadable,  // BOLTed with a BAT that cannot be read: profiled as untranslated
};

const char* to_string(BatStatus status);

// An address of the BOLTed binary, in the input binary's terms.
struct BatLocation {
  const FunctionSymbol* function = nullptr;  // the BOLTed binary's function (or fragment) at it
  const FunctionSymbol* named = nullptr;     // the function a profile names: for a cold
                                             // fragment, the hot part it was split from
  const BatFragment* fragment = nullptr;     // null: BOLT did not rewrite the function
  uint64_t offset = 0;                       // in the input function
};

class BoltedBinary {
 public:
  // What the binary carries; never throws (a damaged table is status Unreadable and its reason).
  static BoltedBinary inspect(const ElfBinary& binary);

  BatStatus status() const { return status_; }
  const std::string& reason() const { return reason_; }  // why not Translated, when BOLTed
  // The input binary's build-id: BOLT flips the last bit of its input's. Empty without one.
  const BuildId& input_build_id() const { return input_build_id_; }
  // The table, when Translated.
  const BoltAddressTranslation* table() const { return table_ ? &*table_ : nullptr; }

  // `vaddr` of the BOLTed binary, in the input's terms; function null when no function holds it.
  // branch_source: `vaddr` is where a taken branch left (BoltAddressTranslation::translate).
  BatLocation locate(const SymbolTable& symbols, uint64_t vaddr, bool branch_source) const;

  // The name perf2bolt 19 gives a function in a profile collected on a BOLTed binary: the first
  // of its names of the form "name/file/N" (a local function with its source file, which names
  // it across builds), else its name.
  static const std::string& profile_name(const FunctionSymbol& function);

 private:
  BatStatus status_ = BatStatus::NotBolted;
  std::string reason_;
  BuildId input_build_id_;
  std::optional<BoltAddressTranslation> table_;
};

}  // namespace profcollect
