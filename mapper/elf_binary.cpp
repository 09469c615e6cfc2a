#include "mapper/elf_binary.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <string_view>

#include "mapper/relocatable_layout.h"

namespace profcollect {

namespace {

constexpr const char* kNotElf = "not an ELF file";
constexpr const char* kTruncated = "truncated ELF file";

void init_libelf_once() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

// end <= limit without overflow.
bool fits(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

}  // namespace

std::shared_ptr<const ElfBinary> ElfBinary::open(const std::string& path) {
  init_libelf_once();
  std::shared_ptr<ElfBinary> binary(new ElfBinary());
  binary->path_ = path;

  // O_NONBLOCK: a FIFO given as a binary must not hang the open; it is refused below.
  binary->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (binary->fd_ < 0) throw ElfError(path, std::strerror(errno));
  struct stat st {};
  if (fstat(binary->fd_, &st) != 0) throw ElfError(path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw ElfError(path, std::strerror(EISDIR));
  if (!S_ISREG(st.st_mode)) throw ElfError(path, "not a regular file");
  binary->file_size_ = static_cast<uint64_t>(st.st_size);

  // Tell "not ELF at all" from "an ELF file cut short" by the magic, before libelf looks.
  unsigned char ident[EI_NIDENT] = {};
  ssize_t got = pread(binary->fd_, ident, sizeof ident, 0);
  if (got < 0) throw ElfError(path, std::strerror(errno));
  if (got < SELFMAG || std::memcmp(ident, ELFMAG, SELFMAG) != 0) throw ElfError(path, kNotElf);
  if (got < EI_NIDENT) throw ElfError(path, kTruncated);
  if (ident[EI_CLASS] != ELFCLASS32 && ident[EI_CLASS] != ELFCLASS64) throw ElfError(path, kNotElf);

  binary->elf_ = elf_begin(binary->fd_, ELF_C_READ_MMAP, nullptr);
  if (binary->elf_ == nullptr) throw ElfError(path, elf_errmsg(-1));
  if (elf_kind(binary->elf_) != ELF_K_ELF) throw ElfError(path, kNotElf);

  binary->read_identity();
  binary->read_segments();
  binary->read_sections();
  binary->read_build_id();
  binary->read_debuglink();
  return binary;
}

void ElfBinary::release_file_pages() const {
  // libelf maps the whole file (ELF_C_READ_MMAP); elf_rawfile() gives that mapping. Should it
  // have read the file into memory instead, the advice only makes the kernel swap what it can
  // (MADV_PAGEOUT never discards contents, unlike MADV_DONTNEED), so either way is sound.
  size_t size = 0;
  char* raw = elf_rawfile(elf_, &size);
  if (raw == nullptr || size == 0) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(raw) + size;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_PAGEOUT);
}

bool ElfBinary::mapped_read_only() const {
  std::call_once(mapping_checked_, [this] {
    size_t size = 0;
    const char* raw = elf_rawfile(elf_, &size);
    if (raw == nullptr || size == 0) return;
    const auto address = reinterpret_cast<uintptr_t>(raw);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      // start-end perms offset dev inode [path]
      unsigned long start = 0, end = 0, inode = 0;
      char perms[5] = {};
      if (std::sscanf(line.c_str(), "%lx-%lx %4s %*s %*s %lu", &start, &end, perms, &inode) != 4)
        continue;
      if (address < start || address >= end) continue;
      mapped_read_only_ = std::string_view(perms) == "r--p" && inode != 0 && address + size <= end;
      return;
    }
  });
  return mapped_read_only_;
}

void ElfBinary::unmap_file_pages() const {
  if (!mapped_read_only()) return;
  size_t size = 0;
  char* raw = elf_rawfile(elf_, &size);
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(raw) + size;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

ElfBinary::~ElfBinary() {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
}

void ElfBinary::read_identity() {
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf_, &ehdr) == nullptr) throw ElfError(path_, kTruncated);
  machine_ = ehdr.e_machine;
  elf_type_ = ehdr.e_type;
  is_64bit_ = ehdr.e_ident[EI_CLASS] == ELFCLASS64;
  little_endian_ = ehdr.e_ident[EI_DATA] != ELFDATA2MSB;
  if (ehdr.e_phnum != 0 &&
      !fits(ehdr.e_phoff, uint64_t{ehdr.e_phentsize} * ehdr.e_phnum, file_size_)) {
    throw ElfError(path_, kTruncated);
  }
  if (ehdr.e_shoff != 0) {
    // libelf quietly reports no sections when the header table runs past the end of the
    // file; check the table's extent from the ELF header ourselves.
    if (!fits(ehdr.e_shoff, ehdr.e_shentsize, file_size_)) throw ElfError(path_, kTruncated);
    uint64_t count = ehdr.e_shnum;
    if (count == 0) {  // more than 0xff00 sections: the count is section 0's sh_size
      const size_t width = is_64bit_ ? 8 : 4;
      uint8_t raw[8] = {};
      if (pread(fd_, raw, width, static_cast<off_t>(ehdr.e_shoff + (is_64bit_ ? 32 : 20))) !=
          static_cast<ssize_t>(width)) {
        throw ElfError(path_, kTruncated);
      }
      for (size_t i = 0; i < width; ++i) {
        count |= uint64_t{raw[little_endian_ ? i : width - 1 - i]} << (8 * i);
      }
    }
    if (!fits(ehdr.e_shoff, uint64_t{ehdr.e_shentsize} * count, file_size_)) {
      throw ElfError(path_, kTruncated);
    }
  }
}

void ElfBinary::read_segments() {
  size_t count = 0;
  if (elf_getphdrnum(elf_, &count) != 0) throw ElfError(path_, kTruncated);
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr) {
      throw ElfError(path_, kTruncated);
    }
    if (phdr.p_type != PT_LOAD) continue;
    load_segments_.push_back(LoadSegment{phdr.p_vaddr, phdr.p_memsz, phdr.p_offset, phdr.p_filesz,
                                         phdr.p_align, phdr.p_flags});
  }
}

void ElfBinary::read_sections() {
  size_t count = 0, names_index = 0;
  if (elf_getshdrnum(elf_, &count) != 0) throw ElfError(path_, kTruncated);
  if (count == 0) return;
  GElf_Ehdr ehdr;
  gelf_getehdr(elf_, &ehdr);
  if (!fits(ehdr.e_shoff, uint64_t{ehdr.e_shentsize} * count, file_size_)) {
    throw ElfError(path_, kTruncated);
  }
  if (elf_getshdrstrndx(elf_, &names_index) != 0) names_index = 0;
  sections_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    Elf_Scn* scn = elf_getscn(elf_, i);
    GElf_Shdr shdr;
    if (scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr) throw ElfError(path_, kTruncated);
    ElfSection section;
    if (names_index != 0) {
      const char* name = elf_strptr(elf_, names_index, shdr.sh_name);
      if (name != nullptr) section.name = name;
    }
    section.addr = shdr.sh_addr;
    section.size = shdr.sh_size;
    section.offset = shdr.sh_offset;
    section.type = shdr.sh_type;
    section.flags = shdr.sh_flags;
    section.entsize = shdr.sh_entsize;
    section.align = shdr.sh_addralign;
    section.index = static_cast<uint32_t>(i);
    section.link = shdr.sh_link;
    section.info = shdr.sh_info;
    // A section whose bytes run past the end of the file: the file was cut short (a partial
    // copy or download). NOBITS sections (.bss, and every allocated section of a separate debug
    // file) occupy no file bytes.
    if (i != 0 && section.has_file_data() && section.type != SHT_NULL &&
        !fits(section.offset, section.size, file_size_)) {
      throw ElfError(path_, kTruncated);
    }
    sections_.push_back(std::move(section));
  }
  if (elf_type_ == ET_REL) place_relocatable_sections(sections_);
}

void ElfBinary::read_build_id() {
  // Scans one block of notes for NT_GNU_BUILD_ID; true when found.
  auto scan = [this](Elf_Data* data) {
    if (data == nullptr) return false;
    size_t offset = 0, name_offset = 0, desc_offset = 0;
    GElf_Nhdr nhdr;
    while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
      const char* base = static_cast<const char*>(data->d_buf);
      if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
          std::memcmp(base + name_offset, "GNU", 4) == 0 && nhdr.n_descsz > 0) {
        build_id_ = BuildId(std::span<const uint8_t>(
            reinterpret_cast<const uint8_t*>(base + desc_offset), nhdr.n_descsz));
        return true;
      }
    }
    return false;
  };
  // The loader's view first (PT_NOTE), then the section headers: a separate debug file keeps
  // the note section but its program headers may point at nothing.
  size_t count = 0;
  if (elf_getphdrnum(elf_, &count) == 0) {
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_NOTE) {
        continue;
      }
      if (!fits(phdr.p_offset, phdr.p_filesz, file_size_)) continue;
      Elf_Data* data =
          elf_getdata_rawchunk(elf_, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz,
                               phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
      if (scan(data)) return;
    }
  }
  for (const ElfSection& section : sections_) {
    if (section.type != SHT_NOTE) continue;
    Elf_Scn* scn = elf_getscn(elf_, section.index);
    if (scan(elf_getdata(scn, nullptr))) return;
  }
}

void ElfBinary::read_debuglink() {
  const ElfSection* section = section_by_name(".gnu_debuglink");
  if (section == nullptr) return;
  std::span<const uint8_t> bytes = section_bytes(*section);
  auto end = std::find(bytes.begin(), bytes.end(), uint8_t{0});
  if (end == bytes.end()) return;
  debuglink_.assign(bytes.begin(), end);
  // The CRC follows the name's NUL, padded to a 4-byte boundary.
  size_t crc_offset = (static_cast<size_t>(end - bytes.begin()) + 1 + 3) & ~size_t{3};
  if (crc_offset + 4 > bytes.size()) return;
  const uint8_t* p = bytes.data() + crc_offset;
  debuglink_crc_ =
      little_endian_
          ? uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24
          : uint32_t{p[3]} | uint32_t{p[2]} << 8 | uint32_t{p[1]} << 16 | uint32_t{p[0]} << 24;
}

uint64_t ElfBinary::preferred_base() const {
  auto lowest = [this](bool executable_only) -> std::optional<uint64_t> {
    std::optional<uint64_t> low;
    for (const LoadSegment& seg : load_segments_) {
      if (executable_only && !seg.executable()) continue;
      if (!low || seg.vaddr < *low) low = seg.vaddr;
    }
    return low;
  };
  std::optional<uint64_t> base = lowest(true);
  if (!base) base = lowest(false);
  return base ? (*base & ~uint64_t{0xfff}) : 0;
}

const ElfSection* ElfBinary::section_by_name(std::string_view name) const {
  for (const ElfSection& section : sections_) {
    if (section.name == name) return &section;
  }
  return nullptr;
}

const ElfSection* ElfBinary::section_containing(uint64_t addr) const {
  for (const ElfSection& section : sections_) {
    if (section.allocated() && section.contains(addr)) return &section;
  }
  return nullptr;
}

std::span<const uint8_t> ElfBinary::section_bytes(const ElfSection& section) const {
  if (!section.has_file_data() || section.size == 0) return {};
  Elf_Scn* scn = elf_getscn(elf_, section.index);
  if (scn == nullptr) return {};
  Elf_Data* data = elf_rawdata(scn, nullptr);
  if (data == nullptr || data->d_buf == nullptr) return {};
  return {static_cast<const uint8_t*>(data->d_buf), data->d_size};
}

std::string_view ElfBinary::machine_name() const {
  switch (machine_) {
    case EM_X86_64:
      return "x86_64";
    case EM_386:
      return "i386";
    case EM_AARCH64:
      return "aarch64";
    case EM_ARM:
      return "arm";
    case EM_PPC64:
      return "ppc64";
    case EM_PPC:
      return "ppc";
    case EM_RISCV:
      return "riscv";
    case EM_S390:
      return "s390";
    case EM_MIPS:
      return "mips";
    case EM_SPARCV9:
      return "sparc64";
#ifdef EM_LOONGARCH
    case EM_LOONGARCH:
      return "loongarch";
#endif
    default:
      return {};
  }
}

bool ElfBinary::runs_on(std::string_view arch) const {
  const std::string_view mine = machine_name();
  if (mine.empty() || arch.empty()) return true;
  if (mine == "i386") return arch.size() == 4 && arch[0] == 'i' && arch.substr(2) == "86";
  if (mine == "arm") return arch.starts_with("arm") && !arch.starts_with("arm64");
  // ppc64 covers ppc64le, riscv riscv64/riscv32, s390 s390x, mips mips64(el), loongarch loongarch64.
  if (mine == "aarch64") return arch == "aarch64" || arch == "arm64";
  return arch.starts_with(mine);
}

}  // namespace profcollect
