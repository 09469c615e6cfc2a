#include "mapper/function_discovery.h"
#include "record/hex_text.h"

#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <string_view>

namespace profcollect {

namespace {

// BOLT's address -> section lookup: the allocated section with the highest start <= addr
// (the later one in header order among equal starts), if addr is inside it; a zero-size
// section holds only its own address. Sections at address 0 are not in its map.
class SectionLookup {
 public:
  explicit SectionLookup(const std::vector<ElfSection>& sections) : all_(sections) {
    for (const ElfSection& s : sections) {
      if (s.allocated() && s.addr != 0) by_address_.push_back(&s);
    }
    std::stable_sort(by_address_.begin(), by_address_.end(),
                     [](const ElfSection* a, const ElfSection* b) { return a->addr < b->addr; });
  }

  const ElfSection* for_address(uint64_t addr) const {
    auto it = std::upper_bound(by_address_.begin(), by_address_.end(), addr,
                               [](uint64_t a, const ElfSection* s) { return a < s->addr; });
    if (it == by_address_.begin()) return nullptr;
    const ElfSection* s = *std::prev(it);
    return addr - s->addr < (s->size == 0 ? 1 : s->size) ? s : nullptr;
  }

  const ElfSection* by_index(uint32_t index) const {
    return index < all_.size() ? &all_[index] : nullptr;
  }

 private:
  const std::vector<ElfSection>& all_;
  std::vector<const ElfSection*> by_address_;
};

bool section_holds(const ElfSection& s, uint64_t addr) {
  return s.contains(addr) || (s.size == 0 && addr == s.addr);
}

bool has_mapping_symbols(uint16_t machine) { return machine == EM_AARCH64 || machine == EM_RISCV; }

// AArch64/RISC-V mapping symbols ($x code, $d data): not functions, tolerated anywhere.
bool is_marker(uint16_t machine, const ElfSymbol& sym) {
  if (!has_mapping_symbols(machine) || sym.type != STT_NOTYPE) return false;
  const std::string& n = sym.name;
  return n == "$d" || n.starts_with("$d.") || n == "$x" || n.starts_with("$x.");
}

// A symbol as the boundary rules see it.
struct SymbolRef {
  uint64_t addr = 0;
  uint64_t size = 0;
  uint8_t type = 0;
  bool global = false;
  std::string_view name;
};

struct Function {
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t max_size = 0;
  const ElfSection* origin = nullptr;  // the section holding the start address
  std::vector<std::string> names;      // primary first
  std::string raw_name;
  bool is_local = false;
  bool is_plt = false;

  bool contains(uint64_t a) const { return a >= addr && a - addr < size; }
};

// May `sym` sit inside `f` without starting a function of its own?
bool valid_in_scope(const Function& f, const SymbolRef& sym) {
  if (f.origin == nullptr || !section_holds(*f.origin, sym.addr)) return false;
  if (sym.size == 0 && f.contains(sym.addr)) return true;
  if (sym.type != STT_NOTYPE) return false;
  return !sym.global;
}

class Discovery {
 public:
  explicit Discovery(const DiscoveryInput& in)
      : in_(in), sections_(*in.sections), machine_(in.machine) {}

  std::vector<FunctionSymbol> run() {
    name_symbols();
    if (in_.plt != nullptr) add_plt_functions();
    if (in_.fdes != nullptr) add_fde_functions();
    adjust_boundaries();
    return finish();
  }

 private:
  struct Candidate {
    const ElfSymbol* sym;
    size_t index;  // symbol-table order
    int rank;      // at one address: FUNC 0, others 1, section symbols 2
    bool marker;
  };

  // The FILE symbol in force for each local symbol (BOLT's alternative "name/file/N" names).
  std::vector<std::string_view> owning_files() const {
    const std::vector<ElfSymbol>& symbols = *in_.symbols;
    std::vector<std::string_view> files(symbols.size());
    std::string_view current;
    for (size_t i = 0; i < symbols.size(); ++i) {
      const ElfSymbol& s = symbols[i];
      if (s.shndx == SHN_UNDEF) continue;
      if (s.type == STT_FILE) {
        if (s.name != "ld-temp.o") current = s.name;  // clang LTO's artificial file
        continue;
      }
      if (!current.empty() && s.binding == STB_LOCAL) files[i] = current;
    }
    return files;
  }

  bool in_memory(const ElfSymbol& s) const {
    if (s.type == STT_FILE) return false;
    if (s.shndx == SHN_ABS) return true;
    if (s.shndx == SHN_UNDEF || s.shndx >= SHN_LORESERVE) return false;
    const ElfSection* section = sections_.by_index(s.shndx);
    return section != nullptr && section->allocated();
  }

  std::string symbol_name(const ElfSymbol& s) const {
    if (s.name.empty() && s.type == STT_SECTION) {
      if (const ElfSection* section = sections_.by_index(s.shndx)) return section->name;
    }
    return s.name;
  }

  void name_symbols() {
    const std::vector<ElfSymbol>& symbols = *in_.symbols;
    const std::vector<std::string_view> files = owning_files();
    std::vector<Candidate> sorted;
    for (size_t i = 0; i < symbols.size(); ++i) {
      const ElfSymbol& s = symbols[i];
      if (!in_memory(s)) continue;
      const int rank = s.type == STT_FUNC ? 0 : s.type == STT_SECTION ? 2 : 1;
      sorted.push_back(Candidate{&s, i, rank, is_marker(machine_, s)});
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](const Candidate& a, const Candidate& b) {
      if (a.sym->value != b.sym->value) return a.sym->value < b.sym->value;
      if (a.marker != b.marker) return a.marker;
      return a.rank < b.rank;
    });

    std::map<std::string, uint64_t> counters;
    std::map<std::string, bool, std::less<>> globals;
    uint64_t anonymous = 0;
    Function* previous = nullptr;

    for (const Candidate& c : sorted) {
      if (c.marker) continue;  // mapping symbols are set aside before naming
      const ElfSymbol& s = *c.sym;
      const uint64_t addr = s.value;
      if (addr == 0) continue;
      if (s.name == "__hot_start" || s.name == "__hot_end") continue;
      const bool global = s.binding != STB_LOCAL;
      const SymbolRef ref{addr, s.size, s.type, global, s.name};
      auto ref_it = refs_.emplace(addr, ref);

      // Section symbols of PLT sections: the PLT entries get their own names below.
      if (s.type == STT_SECTION) {
        const ElfSection* at = sections_.for_address(addr);
        if (at != nullptr && is_plt_section_name(machine_, at->name)) continue;
      }

      const std::string base = symbol_name(s);
      const std::string name = base.starts_with(".L") ? "PG" + base : base;
      std::string unique, alternative;
      if (name.empty()) {
        unique = "ANONYMOUS." + std::to_string(anonymous++);
      } else if (global) {
        // A second global of one name: BOLT ignores an identical duplicate and refuses a
        // different one; neither makes a function.
        if (!globals.emplace(name, true).second) continue;
        unique = name;
      } else {
        std::string alt_prefix;
        if (s.type == STT_FUNC && !files[c.index].empty()) {
          alt_prefix = name + "/" + std::string(files[c.index]);
        }
        unique = name + "/" + std::to_string(++counters[name]);
        if (!alt_prefix.empty()) {
          alternative = alt_prefix + "/" + std::to_string(++counters[alt_prefix]);
        }
      }

      // Is it a function?
      const ElfSection* own = s.shndx == SHN_ABS ? nullptr : sections_.by_index(s.shndx);
      if (own == nullptr) continue;                 // absolute
      if (addr == own->addr + own->size) continue;  // points at its section's end
      if (!own->executable()) continue;             // data
      if (previous != nullptr && s.type != STT_FUNC) {
        if (previous->contains(addr)) continue;  // a label inside the function
        if (previous->size == 0 && valid_in_scope(*previous, ref)) continue;
      }
      if (previous != nullptr && previous->contains(addr) && previous->addr != addr) {
        // Inside the previous function: a local label, or a second entry point, which BOLT
        // then forgets as a boundary.
        if (!valid_in_scope(*previous, ref)) refs_.erase(ref_it);
        continue;
      }

      uint64_t size = s.size;
      if (const CodeRange* fde = fde_at(addr); fde != nullptr && fde->size != size) {
        size = std::max(size, fde->size);
      }

      auto existing = functions_.find(addr);
      Function* f = nullptr;
      if (existing != functions_.end()) {
        f = &existing->second;
        f->size = std::max(f->size, size);
        f->names.push_back(unique);
      } else {
        const ElfSection* origin = sections_.for_address(addr);
        if (origin == nullptr || origin->size == 0) continue;
        Function created;
        created.addr = addr;
        created.size = size;
        created.origin = origin;
        created.names.push_back(unique);
        created.raw_name = s.name;
        created.is_local = !global;
        f = &functions_.emplace(addr, std::move(created)).first->second;
      }
      if (!alternative.empty()) f->names.push_back(alternative);
      previous = f;
    }
  }

  const CodeRange* fde_at(uint64_t addr) const {
    if (in_.fdes == nullptr) return nullptr;
    auto it = std::lower_bound(in_.fdes->begin(), in_.fdes->end(), addr,
                               [](const CodeRange& r, uint64_t a) { return r.start < a; });
    return it != in_.fdes->end() && it->start == addr ? &*it : nullptr;
  }

  void add_plt_functions() {
    for (const PltEntry& entry : in_.plt->entries) {
      auto existing = functions_.find(entry.addr);
      const std::string name = entry.callee + "@PLT";
      if (existing != functions_.end()) {
        // x86-64 adds the PLT name as an alias; AArch64 keeps the symbol it found there.
        if (machine_ == EM_X86_64) existing->second.names.push_back(name);
        continue;
      }
      const ElfSection* origin = sections_.for_address(entry.addr);
      if (origin == nullptr) continue;
      Function f;
      f.addr = entry.addr;
      f.size = 0;  // BOLT sizes PLT functions from their neighbours (adjust_boundaries)
      f.origin = origin;
      f.names.push_back(name);
      f.raw_name = entry.callee;
      f.is_plt = true;
      functions_.emplace(entry.addr, std::move(f));
    }
    for (const PltSection& section : in_.plt->sections) {
      if (functions_.count(section.addr) != 0) continue;
      const ElfSection* origin = sections_.for_address(section.addr);
      if (origin == nullptr) continue;
      Function f;
      f.addr = section.addr;
      f.origin = origin;
      f.names.push_back("__BOLT_PSEUDO_" + section.name);
      f.is_plt = true;
      functions_.emplace(section.addr, std::move(f));
    }
  }

  const Function* containing(uint64_t addr) const {
    auto it = functions_.upper_bound(addr);
    if (it == functions_.begin()) return nullptr;
    const Function& f = std::prev(it)->second;
    return f.contains(addr) ? &f : nullptr;
  }

  void add_fde_functions() {
    for (const CodeRange& fde : *in_.fdes) {
      if (functions_.count(fde.start) != 0 || containing(fde.start) != nullptr) continue;
      const ElfSection* origin = sections_.for_address(fde.start);
      if (origin == nullptr) continue;
      Function f;
      f.addr = fde.start;
      f.size = fde.size;
      f.origin = origin;
      f.names.push_back("__BOLT_FDE_FUNCat" + hex_digits(fde.start));
      functions_.emplace(fde.start, std::move(f));
    }
  }

  void adjust_boundaries() {
    for (auto it = functions_.begin(); it != functions_.end(); ++it) {
      Function& f = it->second;
      auto next_it = std::next(it);
      const Function* next = next_it == functions_.end() ? nullptr : &next_it->second;

      auto sym = refs_.upper_bound(f.addr);
      for (; sym != refs_.end(); ++sym) {
        if (next != nullptr && sym->first >= next->addr) break;
        if (!valid_in_scope(f, sym->second)) break;
      }
      // A section header whose end would pass the top of the address space ends there.
      uint64_t end = f.origin->size > UINT64_MAX - f.origin->addr ? UINT64_MAX
                                                                  : f.origin->addr + f.origin->size;
      if (sym != refs_.end()) end = std::min(end, sym->first);
      if (next != nullptr) end = std::min(end, next->addr);
      const uint64_t max_size = end - f.addr;
      if (max_size < f.size) {
        f.max_size = f.size;  // a symbol inside the function: BOLT keeps the symbol's size
        continue;
      }
      f.max_size = max_size;
      if (f.size == 0) f.size = max_size;
    }
  }

  std::vector<FunctionSymbol> finish() {
    std::vector<FunctionSymbol> out;
    out.reserve(functions_.size());
    for (auto& [addr, f] : functions_) {
      FunctionSymbol fs;
      fs.addr = f.addr;
      fs.size = f.size;
      fs.max_size = f.max_size;
      fs.name = std::move(f.names.front());
      fs.aliases.assign(std::make_move_iterator(f.names.begin() + 1),
                        std::make_move_iterator(f.names.end()));
      fs.raw_name = std::move(f.raw_name);
      fs.is_local = f.is_local;
      fs.is_plt = f.is_plt;
      out.push_back(std::move(fs));
    }
    return out;
  }

  const DiscoveryInput& in_;
  SectionLookup sections_;
  uint16_t machine_;
  std::map<uint64_t, Function> functions_;
  std::multimap<uint64_t, SymbolRef> refs_;  // every named symbol, for the boundary rule
};

}  // namespace

std::vector<FunctionSymbol> discover_functions(const DiscoveryInput& input) {
  if (input.symbols == nullptr || input.sections == nullptr) return {};
  return Discovery(input).run();
}

}  // namespace profcollect
