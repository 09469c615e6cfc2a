// Why a binary's debug information cannot serve AutoFDO, with what is missing and how to get it.
// The message is complete on its own (it names the binary, its build-id and the places looked
// in); `kind` lets callers react (e.g. still write BOLT output when only AutoFDO is impossible).
#pragma once

#include <stdexcept>
#include <string>

namespace profcollect {

class DebugInfoError : public std::runtime_error {
 public:
  enum class Kind {
    NoDebugInfo,        // no DWARF in the binary nor in any separate debug file found
    MissingSplitDwarf,  // skeleton units whose .dwo (or .dwp) files are not found
    NoSymbolTable,      // stripped, and no debug file with a .symtab either
    Unreadable,         // the DWARF is there but libdw cannot read it
  };

  DebugInfoError(Kind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace profcollect
