#include "mapper/image_translator.h"

#include <elf.h>

#include <algorithm>
#include <map>

#include "mapper/elf_symbols.h"

namespace profcollect {

namespace {

// The symbol of that name defined in a section, or (absolute) by a linker script.
std::optional<ElfSymbol> defined_symbol(const std::vector<ElfSymbol>& symbols,
                                        std::string_view name, bool absolute_too) {
  for (const ElfSymbol& s : symbols) {
    if (s.name != name) continue;
    if ((s.shndx != SHN_UNDEF && s.shndx < SHN_LORESERVE) || (absolute_too && s.shndx == SHN_ABS))
      return s;
  }
  return std::nullopt;
}

// Linked in the upper half of the address space, where kernels live (and user programs never).
bool linked_in_upper_half(const ElfBinary& elf) {
  const uint64_t top_bit = elf.is_64bit() ? uint64_t{1} << 63 : uint64_t{1} << 31;
  for (const LoadSegment& seg : elf.load_segments()) {
    if (seg.executable() && (seg.vaddr & top_bit)) return true;
  }
  return false;
}

}  // namespace

std::optional<ModuleLayout::Section> module_section_of_symbol(const ElfBinary& ko,
                                                              std::string_view symbol,
                                                              uint64_t runtime_address) {
  const std::optional<ElfSymbol> s =
      defined_symbol(read_symbols(ko, SymbolTableKind::Static), symbol, false);
  if (!s || s->shndx >= ko.sections().size()) return std::nullopt;
  const ElfSection& section = ko.sections()[s->shndx];
  return ModuleLayout::Section{section.name, runtime_address - (s->value - section.addr)};
}

std::vector<ModuleLayout::Section> module_sections_of_symbols(
    const ElfBinary& ko, const std::vector<RuntimeSymbol>& runtime) {
  std::map<std::string_view, size_t> at_run_time;  // name -> how many times
  for (const RuntimeSymbol& r : runtime) ++at_run_time[r.name];
  std::map<std::string_view, const ElfSymbol*>
      defined;  // unique names only (nullptr: more than once)
  const std::vector<ElfSymbol> symbols = read_symbols(ko, SymbolTableKind::Static);
  for (const ElfSymbol& s : symbols) {
    if (s.shndx == SHN_UNDEF || s.shndx >= SHN_LORESERVE || s.shndx >= ko.sections().size() ||
        s.name.empty())
      continue;
    auto [it, inserted] = defined.emplace(s.name, &s);
    if (!inserted) it->second = nullptr;
  }
  std::map<uint32_t, std::optional<uint64_t>>
      placed;  // section index -> address; nullopt: disagreement
  for (const RuntimeSymbol& r : runtime) {
    if (at_run_time[r.name] != 1) continue;
    const auto it = defined.find(r.name);
    if (it == defined.end() || it->second == nullptr) continue;
    const ElfSymbol& s = *it->second;
    const ElfSection& section = ko.sections()[s.shndx];
    if (!section.executable()) continue;
    const uint64_t address = r.address - (s.value - section.addr);
    auto [slot, inserted] = placed.emplace(s.shndx, address);
    if (!inserted && slot->second && *slot->second != address) slot->second.reset();
  }
  std::vector<ModuleLayout::Section> out;
  for (const auto& [index, address] : placed) {
    if (address) out.push_back({ko.sections()[index].name, *address});
  }
  return out;
}

ImageTranslator ImageTranslator::for_file(const ElfBinary& elf) {
  if (elf.elf_type() == ET_REL) return kernel_module(elf);
  if (elf.elf_type() == ET_EXEC && linked_in_upper_half(elf)) {
    ImageTranslator t = kernel(elf);
    if (!t.empty()) return t;
  }
  return user_file(elf);
}

ImageTranslator ImageTranslator::user_file(const ElfBinary& elf) {
  ImageTranslator t;
  t.kind_ = ImageKind::UserFile;
  t.segments_ = ExecSegmentMap(elf.load_segments());
  return t;
}

ImageTranslator ImageTranslator::kernel(const ElfBinary& vmlinux) {
  ImageTranslator t;
  t.kind_ = ImageKind::Kernel;
  t.segments_ = ExecSegmentMap(vmlinux.load_segments());
  const std::vector<ElfSymbol> symbols = read_symbols(vmlinux, SymbolTableKind::Static);
  if (auto s = defined_symbol(symbols, "_text", true)) t.text_ = s->value;
  if (auto s = defined_symbol(symbols, "_stext", true)) t.stext_ = s->value;
  return t;
}

ImageTranslator ImageTranslator::kernel_module(const ElfBinary& ko, const ModuleLayout& layout) {
  ImageTranslator t;
  t.kind_ = ImageKind::KernelModule;
  for (const ElfSection& section : ko.sections()) {
    if (!section.allocated() || !section.executable() || section.size == 0) continue;
    std::optional<uint64_t> offset;
    if (layout.sections.empty()) {
      if (section.name == ".text") offset = 0;
    } else {
      for (const ModuleLayout::Section& placed : layout.sections) {
        if (placed.name == section.name) {
          offset = placed.address - layout.start;
          break;
        }
      }
    }
    if (offset)
      t.sections_.push_back(PlacedSection{*offset, section.size, section.addr, section.index});
  }
  std::sort(t.sections_.begin(), t.sections_.end(),
            [](const PlacedSection& a, const PlacedSection& b) { return a.offset < b.offset; });
  return t;
}

bool ImageTranslator::empty() const {
  switch (kind_) {
    case ImageKind::UserFile:
      return segments_.empty();
    case ImageKind::Kernel:
      return segments_.empty() || (!text_ && !stext_);
    case ImageKind::KernelModule:
      return sections_.empty();
    case ImageKind::Anonymous:
    case ImageKind::Special:
      break;
  }
  return true;
}

namespace {

// The addresses of mapping m whose image addresses, by one shift, are [image_begin, image_end)
// (delta: image address - runtime address), clipped to m; `addr`, which must be among them, alone
// when the arithmetic wraps (nonsense input).
ImageTranslator::Run clip_run(const Mapping& m, uint64_t addr, uint64_t image_begin,
                              uint64_t image_end, uint64_t delta, uint32_t section) {
  uint64_t begin = image_begin - delta, end = image_end - delta;
  if (begin > end) return {addr, addr + 1, delta, section};
  begin = std::max(begin, m.start);
  end = std::min(end, m.end);
  if (addr < begin || addr >= end) return {addr, addr + 1, delta, section};
  return {begin, end, delta, section};
}

}  // namespace

std::optional<ImageAddress> ImageTranslator::translate(const Mapping& m, const Dso& dso,
                                                       uint64_t addr) const {
  const std::optional<Run> run = translate_run(m, dso, addr);
  if (!run) return std::nullopt;
  return ImageAddress{addr + run->delta, run->section};
}

std::optional<ImageTranslator::Run> ImageTranslator::translate_run(const Mapping& m, const Dso& dso,
                                                                   uint64_t addr) const {
  switch (kind_) {
    case ImageKind::UserFile: {
      if (!m.executable) return std::nullopt;
      // vaddr = file offset - run.begin + run.target, the file offset addr - start + pgoff.
      const std::optional<ExecSegmentMap::Run> run = segments_.file_run(addr - m.start + m.pgoff);
      if (!run) return std::nullopt;
      const uint64_t delta = m.pgoff - m.start - run->begin + run->target;
      return clip_run(m, addr, run->target, run->end - run->begin + run->target, delta, 0);
    }
    case ImageKind::Kernel: {
      // The mapping's name says which reference symbol its pgoff is the runtime address of.
      const std::optional<uint64_t>& reference = dso.path.ends_with("_stext") ? stext_ : text_;
      if (!reference) return std::nullopt;
      const uint64_t delta = *reference - m.pgoff;
      const std::optional<ExecSegmentMap::Run> run = segments_.vaddr_run(addr + delta);
      if (!run) return std::nullopt;
      return clip_run(m, addr, run->begin, run->end, delta, 0);
    }
    case ImageKind::KernelModule: {
      // The offset into the module's memory: perf gives its mapping pgoff 0, and a split of
      // the mapping moves pgoff along with start.
      const uint64_t offset = addr - m.start + m.pgoff;
      auto it = std::upper_bound(sections_.begin(), sections_.end(), offset,
                                 [](uint64_t o, const PlacedSection& s) { return o < s.offset; });
      if (it == sections_.begin()) return std::nullopt;
      --it;
      if (offset - it->offset >= it->size) return std::nullopt;
      const uint64_t delta = m.pgoff - m.start - it->offset + it->addr;
      return clip_run(m, addr, it->addr, it->addr + it->size, delta, it->index);
    }
    case ImageKind::Anonymous:
    case ImageKind::Special:
      break;
  }
  return std::nullopt;
}

}  // namespace profcollect
