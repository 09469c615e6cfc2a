#include "mapper/dwarf_symbolizer.h"

#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <deque>
#include <map>
#include <exception>
#include <optional>
#include <thread>

#include "mapper/debug_info_error.h"
#include "mapper/dwarf_line_table.h"
#include "mapper/unit_address_ranges.h"

namespace profcollect {

namespace {

// Not in elfutils' dwarf.h: the GNU extension clang and gcc put on inlined subroutines.
constexpr unsigned kAtGnuDiscriminator = 0x2136;

std::vector<AddressRange> ranges_of(Dwarf_Die* die) {
  std::vector<AddressRange> ranges;
  Dwarf_Addr base = 0, begin = 0, end = 0;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_ranges(die, offset, &base, &begin, &end)) > 0) {
    ranges.push_back(AddressRange{begin, end});
  }
  return ranges;
}

std::string_view string_attr(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, name, &attr) == nullptr) return {};
  const char* value = dwarf_formstring(&attr);
  return value == nullptr ? std::string_view() : std::string_view(value);
}

// LLVM's DWARFDie::getName(LinkageName): the linkage name, else the plain name. A present but
// empty name counts as present (and then ends an inline chain, like a missing one).
std::optional<std::string_view> subroutine_name(Dwarf_Die* die) {
  for (unsigned name :
       {unsigned{DW_AT_linkage_name}, unsigned{DW_AT_MIPS_linkage_name}, unsigned{DW_AT_name}}) {
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(die, name, &attr) == nullptr) continue;
    if (const char* value = dwarf_formstring(&attr)) return std::string_view(value);
  }
  return std::nullopt;
}

uint32_t unsigned_attr(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr(die, name, &attr) == nullptr || dwarf_formudata(&attr, &value) != 0) return 0;
  return static_cast<uint32_t>(value);
}

// The (decompressed, and for an ET_REL file relocated) contents of the DWARF's .debug_line,
// read through the handle libdw reads the DWARF through (DwarfFile::elf()).
std::span<const uint8_t> debug_line_bytes(Elf* elf) {
  size_t names = 0;
  if (elf == nullptr || elf_getshdrstrndx(elf, &names) != 0) return {};
  for (const std::string_view wanted : {".debug_line", ".zdebug_line"}) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
      const char* name = elf_strptr(elf, names, shdr.sh_name);
      if (name == nullptr || wanted != name) continue;
      // libdw decompresses the debug sections it opens; make sure of it for this one.
      if (shdr.sh_flags & SHF_COMPRESSED) elf_compress(scn, 0, 0);
      if (wanted[1] == 'z') elf_compress_gnu(scn, 0, 0);
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (data == nullptr || data->d_buf == nullptr) break;
      return {static_cast<const uint8_t*>(data->d_buf), data->d_size};
    }
  }
  return {};
}

bool is_subroutine(int tag) { return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine; }

// Whether the children of a DIE of this tag can hold a subroutine with code. They cannot below
// parameters, variables, members, call sites, enumerations, array and function types, template
// parameters: a gcc -O2 unit has as many of those as of everything else, and skipping them is
// what makes a walk of the unit cheap. (Class types must be entered: gcc puts the definition, with
// code, of a lambda's operator() inside its closure type.)
bool may_hold_code(int tag) {
  switch (tag) {
    case DW_TAG_formal_parameter:
    case DW_TAG_variable:
    case DW_TAG_member:
    case DW_TAG_call_site:
    case DW_TAG_GNU_call_site:
    case DW_TAG_enumeration_type:
    case DW_TAG_array_type:
    case DW_TAG_subroutine_type:
    case DW_TAG_template_type_parameter:
    case DW_TAG_template_value_parameter:
    case DW_TAG_GNU_template_parameter_pack:
    case DW_TAG_GNU_formal_parameter_pack:
      return false;
    default:
      return true;
  }
}

// Pre-order walk of the DIEs below `parent`; `visit(die, context)` returns the context for the
// die's children, or nullopt to skip them. Iterative: the nesting depth comes from the file, and
// a recursion as deep as a damaged unit's DIEs nest would overflow the stack.
template <typename Context, typename Visit>
void walk_children(Dwarf_Die* parent, Context context, Visit& visit) {
  struct Level {
    Dwarf_Die die;    // the DIE being visited at this depth
    Context context;  // the context its siblings are visited in
  };
  std::vector<Level> stack;
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  stack.push_back(Level{child, context});
  while (!stack.empty()) {
    Level& level = stack.back();
    std::optional<Context> inner = visit(level.die, level.context);
    Dwarf_Die first;
    const bool descend = inner.has_value() && dwarf_haschildren(&level.die) > 0 &&
                         dwarf_child(&level.die, &first) == 0;
    // The sibling to visit after this DIE's subtree, found before the vector may move.
    Dwarf_Die sibling;
    const bool has_sibling = dwarf_siblingof(&level.die, &sibling) == 0;
    if (has_sibling) {
      level.die = sibling;
    } else {
      level.die.addr = nullptr;  // this depth is done once the subtree is
    }
    if (descend) {
      stack.push_back(Level{first, *inner});
      continue;
    }
    while (!stack.empty() && stack.back().die.addr == nullptr) stack.pop_back();
  }
}

// Calls visit(cudie, subdie, unit_type) for each unit that may hold code (compile, partial and
// skeleton units; type units hold none), in file order. dwarf_get_units' status: 1 at the end,
// -1 on an error.
template <typename Visit>
int for_each_code_unit(Dwarf* dwarf, Visit&& visit) {
  Dwarf_CU* cu = nullptr;
  Dwarf_CU* next = nullptr;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Die cudie, subdie;
  int status;
  while ((status = dwarf_get_units(dwarf, cu, &next, &version, &unit_type, &cudie, &subdie)) == 0) {
    cu = next;
    if (unit_type == DW_UT_compile || unit_type == DW_UT_partial || unit_type == DW_UT_skeleton)
      visit(cudie, subdie, unit_type);
  }
  return status;
}

}  // namespace

// The DIEs of one unit that code addresses resolve to, built on first use.
struct DwarfSymbolizer::Unit {
  uint32_t index = 0;    // in units_
  Dwarf_Off offset = 0;  // of its unit DIE in .debug_info (the skeleton's for a split unit)
  Dwarf_Die code_die;    // the unit's DIE tree (the split unit's for a skeleton)
  Dwarf_Die line_die;    // the DIE with DW_AT_stmt_list (the skeleton's for a split unit)
  // The subprograms with code that no other subprogram with code encloses, in pre-order (found
  // by the construction's walk): every subroutine with an address lies in one of their subtrees.
  std::vector<Dwarf_Off> outer_subprograms;
  // Their ranges by address. When no two overlap, the address map is built subprogram by
  // subprogram, only for those holding addresses asked about (a C++ unit holds hundreds of
  // functions, a profile touches a few of them); else the unit is walked whole, as LLVM does,
  // for the order of insertion decides which of two overlapping subprograms owns an address.
  std::vector<OuterRange> outer_ranges;
  bool outers_overlap = false;
  std::vector<bool> outer_walked;

  struct Subroutine {
    Dwarf_Die die;
    int32_t parent = -1;  // nearest enclosing subroutine, -1 for none
    bool is_subprogram = false;
    bool resolved = false;
    std::optional<std::string_view> name;
    uint32_t decl_line = 0, call_line = 0, call_discriminator = 0;
  };
  std::vector<Subroutine> subroutines;
  // LLVM's AddrDieMap: begin -> (end, subroutine index), non-overlapping, innermost wins.
  std::map<uint64_t, std::pair<uint64_t, uint32_t>> address_map;
  bool mapped = false;
  std::optional<DwarfLineTable> lines;

  // Walks the unit's DIEs for the subroutines at `address` and their address map (all of the
  // unit's when its outer subprograms overlap). Returns whether it walked anything.
  bool build_address_map(uint64_t address);
  void walk_outer(Dwarf* dwarf, Dwarf_Off offset);
  bool decoded() const { return mapped || lines.has_value(); }
  // Frees the address map and line table (built again on demand). Assigned from new, empty
  // objects: clear() (or `= {}`, which is assign()) would keep the capacity to be freed.
  void release() {
    subroutines = std::vector<Subroutine>();
    address_map = std::map<uint64_t, std::pair<uint64_t, uint32_t>>();
    outer_walked = std::vector<bool>();
    mapped = false;
    lines.reset();
  }
  const Subroutine* subroutine_at(uint64_t address);
  Subroutine& resolve(uint32_t index);
  const DwarfLineTable& line_table(std::span<const uint8_t> debug_line, std::string& error);
};

const DwarfLineTable& DwarfSymbolizer::Unit::line_table(std::span<const uint8_t> debug_line,
                                                        std::string& error) {
  if (lines) return *lines;
  lines.emplace();
  Dwarf_Attribute attr;
  Dwarf_Word offset = 0;
  if (dwarf_attr(&line_die, DW_AT_stmt_list, &attr) == nullptr ||
      dwarf_formudata(&attr, &offset) != 0) {
    return *lines;  // a unit without line table: every line is 0
  }
  try {
    lines = DwarfLineTable::parse(debug_line, offset);
  } catch (const std::runtime_error& e) {
    if (error.empty()) error = e.what();
  }
  return *lines;
}

void DwarfSymbolizer::Unit::walk_outer(Dwarf* dwarf, Dwarf_Off offset) {
  auto visit = [this](Dwarf_Die& die, int32_t parent) -> std::optional<int32_t> {
    const int tag = dwarf_tag(&die);
    if (!is_subroutine(tag)) {
      if (!may_hold_code(tag)) return std::nullopt;
      return parent;
    }
    // A declaration has no code, and only parameters below it.
    if (tag == DW_TAG_subprogram && dwarf_hasattr(&die, DW_AT_declaration)) return std::nullopt;
    const auto index = static_cast<int32_t>(subroutines.size());
    Subroutine s;
    s.die = die;
    s.parent = parent;
    s.is_subprogram = tag == DW_TAG_subprogram;
    subroutines.push_back(s);
    // The range insertion of DWARFUnit::updateAddressDieMap: a child's range splits the range
    // it lies in, so that the deepest DIE owns each address.
    Dwarf_Addr base = 0, begin = 0, end = 0;
    ptrdiff_t offset = 0;
    while ((offset = dwarf_ranges(&die, offset, &base, &begin, &end)) > 0) {
      if (begin == end) continue;
      auto b = address_map.upper_bound(begin);
      if (b != address_map.begin() && begin < (--b)->second.first) {
        if (end < b->second.first) address_map[end] = b->second;
        if (begin > b->first) address_map[b->first].first = begin;
      }
      address_map[begin] = {end, static_cast<uint32_t>(index)};
    }
    return index;
  };
  Dwarf_Die die;
  if (dwarf_offdie(dwarf, offset, &die) == nullptr) return;
  if (std::optional<int32_t> inner = visit(die, int32_t{-1})) walk_children(&die, *inner, visit);
}

bool DwarfSymbolizer::Unit::build_address_map(uint64_t address) {
  // LLVM walks every DIE of the unit in pre-order; only the subtrees of the outer subprograms
  // with code hold subroutines with addresses, and they are visited in the same order. (The
  // rest -- the types and declarations of every header, the abstract functions -- is most of a
  // C++ unit.)
  Dwarf* dwarf = dwarf_cu_getdwarf(code_die.cu);
  if (outers_overlap) {
    if (mapped) return false;
    mapped = true;
    for (Dwarf_Off offset : outer_subprograms) walk_outer(dwarf, offset);
    return true;
  }
  mapped = true;
  if (outer_walked.empty()) outer_walked.assign(outer_subprograms.size(), false);
  auto it = std::upper_bound(outer_ranges.begin(), outer_ranges.end(), address,
                             [](uint64_t a, const OuterRange& r) { return a < r.begin; });
  if (it == outer_ranges.begin() || address >= std::prev(it)->end) return false;
  const uint32_t outer = std::prev(it)->outer;
  if (outer_walked[outer]) return false;
  outer_walked[outer] = true;
  walk_outer(dwarf, outer_subprograms[outer]);
  return true;
}

const DwarfSymbolizer::Unit::Subroutine* DwarfSymbolizer::Unit::subroutine_at(uint64_t address) {
  auto it = address_map.upper_bound(address);
  if (it == address_map.begin()) return nullptr;
  --it;
  if (address >= it->second.first) return nullptr;
  return &subroutines[it->second.second];
}

DwarfSymbolizer::Unit::Subroutine& DwarfSymbolizer::Unit::resolve(uint32_t index) {
  Subroutine& s = subroutines[index];
  if (!s.resolved) {
    s.resolved = true;
    s.name = subroutine_name(&s.die);
    int decl = 0;
    if (dwarf_decl_line(&s.die, &decl) == 0 && decl > 0) s.decl_line = static_cast<uint32_t>(decl);
    s.call_line = unsigned_attr(&s.die, DW_AT_call_line);
    s.call_discriminator = unsigned_attr(&s.die, kAtGnuDiscriminator);
  }
  return s;
}

DwarfSymbolizer::DwarfSymbolizer(std::unique_ptr<DwarfFile> file, uint64_t preferred_base,
                                 unsigned threads, size_t kept_answers)
    : file_(std::move(file)),
      preferred_base_(preferred_base),
      threads_(threads),
      kept_answers_(kept_answers) {
  debug_line_ = debug_line_bytes(file_->elf());
  // Addresses asked about are instructions: none lies below the lowest executable section (a
  // discarded COMDAT function's DWARF says address 0; several of them overlap).
  for (const ElfSection& section : file_->binary().sections()) {
    if (section.executable() && section.allocated() && section.size != 0)
      lowest_code_ = std::min(lowest_code_, section.addr);
  }
  if (lowest_code_ == UINT64_MAX) lowest_code_ = 0;
  scan_units();
}

DwarfSymbolizer::~DwarfSymbolizer() = default;

void DwarfSymbolizer::scan_units() {
  std::vector<std::string> missing_dwo;
  Dwarf_Off released_at = 0;
  const int status = for_each_code_unit(
      file_->dwarf(), [&](Dwarf_Die& cudie, Dwarf_Die& subdie, uint8_t unit_type) {
        auto unit = std::make_unique<Unit>();
        unit->line_die = cudie;
        unit->code_die = cudie;
        if (unit_type == DW_UT_skeleton) {
          if (subdie.addr == nullptr) {
            std::string name(string_attr(&cudie, DW_AT_dwo_name));
            if (name.empty()) name = std::string(string_attr(&cudie, DW_AT_GNU_dwo_name));
            const std::string_view dir = string_attr(&cudie, DW_AT_comp_dir);
            if (!dir.empty() && !name.empty() && name.front() != '/')
              name = std::string(dir) + "/" + name;
            missing_dwo.push_back(name.empty() ? std::string("(unnamed .dwo)") : name);
            return;
          }
          unit->code_die = subdie;
        }
        const auto unit_index = static_cast<uint32_t>(units_.size());
        unit->index = unit_index;
        for (const AddressRange& r : ranges_of(&cudie)) {
          if (r.begin < r.end) unit_ranges_.push_back(UnitAddressRange{r.begin, r.end, unit_index});
        }
        unit->offset = dwarf_dieoffset(&cudie);
        units_.push_back(std::move(unit));
        // Reading a unit's first DIE maps the pages around it too (the kernel's fault-around): a
        // vmlinux's thousands of units would keep well over a hundred MiB resident.
        if (units_.back()->offset >= released_at + kWalkedBytesKeptResident) {
          file_->file().unmap_file_pages();
          released_at = units_.back()->offset;
        }
      });
  if (status < 0) {
    throw DebugInfoError(
        DebugInfoError::Kind::Unreadable,
        file_->file().path() + ": cannot read its DWARF units: " + dwarf_errmsg(-1));
  }
  if (!missing_dwo.empty()) {
    std::string message = file_->binary().path() +
                          ": split DWARF: " + std::to_string(missing_dwo.size()) + " of " +
                          std::to_string(missing_dwo.size() + units_.size()) +
                          " compile units keep their debug info in .dwo files that are not found (";
    for (size_t i = 0; i < missing_dwo.size() && i < 3; ++i) {
      message += (i ? ", " : "") + missing_dwo[i];
    }
    if (missing_dwo.size() > 3) message += ", ...";
    message +=
        "). Keep the .dwo files where the build wrote them, or rebuild without -gsplit-dwarf "
        "(.dwp packages are not read)";
    throw DebugInfoError(DebugInfoError::Kind::MissingSplitDwarf, message);
  }
  unit_ranges_ = disjoint_unit_ranges(unit_ranges_);
  index_all_functions();
}

void DwarfSymbolizer::index_all_functions() {
  const size_t n = units_.size();
  // The second thread takes the units from `split` on: half the bytes of the unit headers' DIE
  // offsets (a split unit's own DIEs are elsewhere, and counted as nothing).
  size_t split = n;
  std::unique_ptr<DwarfFile> second;
  if (threads_ > 1 && n > 1) second = file_->reopen();
  if (second != nullptr) {
    const Dwarf_Off total = units_.back()->offset;
    split = 1;
    while (split + 1 < n && units_[split]->offset < total / 2) ++split;
  }

  IndexedRun first_run, second_run;
  std::exception_ptr second_error;
  std::thread worker;
  if (second != nullptr) {
    worker = std::thread([&] {
      try {
        // The same units, in the same order, through the second handle.
        std::vector<Dwarf_Die> dies;
        size_t index = 0;
        for_each_code_unit(
            second->dwarf(), [&](Dwarf_Die& cudie, Dwarf_Die& subdie, uint8_t unit_type) {
              if (index >= n || dwarf_dieoffset(&cudie) != units_[index]->offset ||
                  (unit_type == DW_UT_skeleton && subdie.addr == nullptr)) {
                throw DebugInfoError(DebugInfoError::Kind::Unreadable,
                                     file_->file().path() + ": changed while it was read");
              }
              if (index++ >= split) dies.push_back(unit_type == DW_UT_skeleton ? subdie : cudie);
              if (index % 256 == 0) second->file().unmap_file_pages();  // as in scan_units()
            });
        if (index != n) {
          throw DebugInfoError(DebugInfoError::Kind::Unreadable,
                               file_->file().path() + ": changed while it was read");
        }
        index_run(dies, second->file(), second_run);
      } catch (...) {
        second_error = std::current_exception();
      }
    });
  }
  std::vector<Dwarf_Die> dies;
  for (size_t i = 0; i < split; ++i) dies.push_back(units_[i]->code_die);
  std::exception_ptr first_error;
  try {
    index_run(dies, file_->file(), first_run);
  } catch (...) {
    first_error = std::current_exception();
  }
  if (worker.joinable()) worker.join();
  if (first_error) std::rethrow_exception(first_error);
  if (second_error) std::rethrow_exception(second_error);

  // In unit order, as one walk of every unit adds them (the first to claim a start keeps it).
  auto merge = [&](IndexedRun& run, size_t first_unit) {
    for (const IndexedRun::Subprogram& sp : run.subprograms) {
      functions_.add(sp.name,
                     std::span<const AddressRange>(run.ranges).subspan(sp.first_range, sp.ranges));
    }
    for (size_t k = 0; k < run.outer.size(); ++k) {
      Unit& unit = *units_[first_unit + k];
      unit.outer_subprograms = std::move(run.outer[k].offsets);
      unit.outer_ranges = std::move(run.outer[k].ranges);
      std::erase_if(unit.outer_ranges,
                    [this](const OuterRange& r) { return r.end <= lowest_code_; });
      std::sort(unit.outer_ranges.begin(), unit.outer_ranges.end(),
                [](const OuterRange& a, const OuterRange& b) { return a.begin < b.begin; });
      for (size_t r = 1; r < unit.outer_ranges.size(); ++r) {
        if (unit.outer_ranges[r].begin < unit.outer_ranges[r - 1].end) unit.outers_overlap = true;
      }
    }
  };
  merge(first_run, 0);
  merge(second_run, split);
  file_->file().unmap_file_pages();  // the names the merge read
}

void DwarfSymbolizer::index_run(const std::vector<Dwarf_Die>& code_dies, const ElfBinary& file,
                                IndexedRun& run) const {
  // The walk reads all the debug info once; what it read need not stay resident.
  Dwarf_Off released_at = 0;
  for (Dwarf_Die die : code_dies) {
    index_functions(die, run);
    const Dwarf_Off offset = dwarf_dieoffset(&die);
    if (offset >= released_at + kWalkedBytesKeptResident || offset < released_at) {
      file.unmap_file_pages();
      released_at = offset;
    }
  }
  file.unmap_file_pages();
}

void DwarfSymbolizer::index_functions(Dwarf_Die code_die, IndexedRun& run) const {
  IndexedRun::Outers& outer = run.outer.emplace_back();
  // Every subprogram with code, as llvm-profgen's walk of all DIEs finds them. What cannot hold
  // one is skipped: below an inlined subroutine are only its inlined body's parameters, blocks,
  // variables and further inlined subroutines (a local type, and a lambda's operator() defined
  // in its closure type, belong to the abstract function, not to its inlined copies). The
  // context is whether a subprogram with code encloses the DIE.
  //
  // In C a structure, union or enumeration holds members only: the types of a C unit -- most of
  // its DIEs, the headers' -- are passed over whole.
  bool c_language = false;
  switch (dwarf_srclang(&code_die)) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
    case 0x2c:  // DW_LANG_C17, not in elfutils 0.188's dwarf.h
      c_language = true;
      break;
    default:
      break;
  }
  std::vector<AddressRange>& ranges = run.ranges;
  auto visit = [&](Dwarf_Die& die, bool enclosed) -> std::optional<bool> {
    const int tag = dwarf_tag(&die);
    if (tag == DW_TAG_inlined_subroutine || !may_hold_code(tag)) return std::nullopt;
    if (c_language && (tag == DW_TAG_structure_type || tag == DW_TAG_union_type))
      return std::nullopt;
    if (tag != DW_TAG_subprogram) return enclosed;
    if (dwarf_hasattr(&die, DW_AT_declaration)) return std::nullopt;
    // Its ranges go at the end of the run's: kept when it is a function, taken back if not.
    const size_t first = ranges.size();
    const size_t first_outer_range = outer.ranges.size();
    // A subprogram with code inside another (a local class's member function, a lambda's
    // operator()) has code apart from the enclosing function's: its ranges lead to the subtree
    // of the outer subprogram that holds it.
    const bool recorded = !enclosed || !outer.offsets.empty();
    const auto outer_index = static_cast<uint32_t>(outer.offsets.size() - (enclosed ? 1 : 0));
    Dwarf_Addr base = 0, begin = 0, end = 0;
    ptrdiff_t offset = 0;
    bool code = false;
    while ((offset = dwarf_ranges(&die, offset, &base, &begin, &end)) > 0) {
      if (end <= begin) continue;
      code = true;
      if (begin >= preferred_base_) ranges.push_back(AddressRange{begin, end});  // not discarded
      if (recorded) outer.ranges.push_back(OuterRange{begin, end, outer_index});
    }
    if (!code) {
      outer.ranges.resize(first_outer_range);
      return enclosed;  // an abstract function: no code of its own
    }
    if (!enclosed) outer.offsets.push_back(dwarf_dieoffset(&die));
    if (ranges.size() > first) {
      if (std::optional<std::string_view> name = subroutine_name(&die)) {
        run.subprograms.push_back(IndexedRun::Subprogram{
            *name, static_cast<uint32_t>(first), static_cast<uint32_t>(ranges.size() - first)});
      } else {
        ranges.resize(first);
      }
    }
    return true;
  };
  walk_children(&code_die, false, visit);
}

void DwarfSymbolizer::map_unit(Unit* unit, uint64_t address) const {
  make_room_for(unit);
  if (unit->build_address_map(address)) ++counts_.unit_walks;
}

DwarfSymbolizer::Unit* DwarfSymbolizer::unit_for(uint64_t address) const {
  const UnitAddressRange* range = unit_range_holding(unit_ranges_, address);
  return range == nullptr ? nullptr : units_[range->unit].get();
}

void DwarfSymbolizer::drop_caches(Answers answers) {
  if (answers == Answers::Forget) {
    // Assigned afresh rather than cleared: clear() keeps a hash table's buckets, and those are
    // what grows with the addresses a long run has met.
    cache_ = std::unordered_map<uint64_t, uint32_t>();
    stacks_ = std::deque<InlineStack>();
  }
  for (auto& unit : units_) unit->release();
  decoded_ = std::deque<uint32_t>();
  file_->file().unmap_file_pages();
}

size_t DwarfSymbolizer::decoded_units() const {
  return static_cast<size_t>(std::count_if(
      units_.begin(), units_.end(), [](const std::unique_ptr<Unit>& u) { return u->decoded(); }));
}

void DwarfSymbolizer::make_room_for(const Unit* unit) const {
  // A unit's address map holds every subroutine DIE of the unit, however few of its addresses
  // are asked about: with inlined C++ that is megabytes per unit, and a profile touching a few
  // hundred units would hold them all. Addresses are mostly asked in order, so the units decoded
  // longest ago are the ones not needed any more (the per-address cache keeps their answers).
  if (unit->decoded()) return;

  if (decoded_.size() >= kMaxDecodedUnits) {
    while (decoded_.size() >= kMaxDecodedUnits) {
      units_[decoded_.front()]->release();
      decoded_.pop_front();
    }
    // The pages of the units let go (the ones kept come back when touched).
    file_->file().unmap_file_pages();
  }
  decoded_.push_back(unit->index);
}

namespace {

// The same frames: names compared as the same DWARF strings, which is all that sharing needs.
bool same_frames(const InlineStack& a, const InlineStack& b) {
  return std::equal(
      a.begin(), a.end(), b.begin(), b.end(), [](const InlineFrame& x, const InlineFrame& y) {
        return x.name.data() == y.name.data() && x.name.size() == y.name.size() &&
               x.decl_line == y.decl_line && x.line == y.line && x.discriminator == y.discriminator;
      });
}

}  // namespace

const InlineStack& DwarfSymbolizer::symbolize(uint64_t address) const {
  auto it = cache_.find(address);
  if (it != cache_.end()) return stacks_[it->second];
  InlineStack stack = compute(address);
  ++counts_.addresses;
  if (cache_.size() >= kept_answers_) {
    unkept_ = std::move(stack);
    return unkept_;
  }
  // Consecutive instructions mostly share their whole inline chain, line included: they share
  // one copy of it too (118K addresses had 55K stacks in a profile of a big C++ binary).
  if (stacks_.empty() || !same_frames(stacks_.back(), stack)) {
    stack.shrink_to_fit();
    stacks_.push_back(std::move(stack));
  }
  const auto index = static_cast<uint32_t>(stacks_.size() - 1);
  cache_.emplace(address, index);
  return stacks_[index];
}

std::optional<uint32_t> DwarfSymbolizer::unit_of(uint64_t address) const {
  if (const Unit* unit = unit_for(address)) return unit->index;
  return std::nullopt;
}

std::string DwarfSymbolizer::unit_name(uint32_t unit) const {
  if (unit >= units_.size()) return {};
  Dwarf_Die die = units_[unit]->code_die;
  const char* name = dwarf_diename(&die);
  return name == nullptr ? std::string() : std::string(name);
}

InlineStack DwarfSymbolizer::compute(uint64_t address) const {
  InlineStack stack;
  Unit* unit = unit_for(address);
  if (unit == nullptr) return stack;
  map_unit(unit, address);
  const Unit::Subroutine* leaf = unit->subroutine_at(address);
  if (leaf == nullptr) return stack;

  // The chain leaf first, up to (and including) the first subprogram.
  std::vector<uint32_t> chain;
  for (auto index = static_cast<int32_t>(leaf - unit->subroutines.data()); index >= 0;) {
    chain.push_back(static_cast<uint32_t>(index));
    const Unit::Subroutine& s = unit->subroutines[index];
    if (s.is_subprogram) break;
    index = s.parent;
  }

  for (size_t k = chain.size(); k-- > 0;) {
    const Unit::Subroutine& s = unit->resolve(chain[k]);
    if (!s.name || s.name->empty()) break;
    InlineFrame frame;
    frame.name = *s.name;
    frame.decl_line = s.decl_line;
    if (k == 0) {
      if (std::optional<LineRow> row =
              unit->line_table(debug_line_, line_table_error_).find(address)) {
        frame.line = row->line;
        frame.discriminator = row->discriminator;
      }
    } else {
      const Unit::Subroutine& callee = unit->resolve(chain[k - 1]);
      frame.line = callee.call_line;
      frame.discriminator = callee.call_discriminator;
    }
    stack.push_back(frame);
  }
  return stack;
}

}  // namespace profcollect
