// An ELF file opened through libelf: its program headers, sections, build-id and identity.
// Symbols live in SymbolTable, address arithmetic in ExecSegmentMap; this class only reads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "record/build_id.h"

// libelf's handle type (libelf.h: typedef struct Elf Elf).
struct Elf;

namespace profcollect {

// Opening or reading an ELF file failed: names the file and the reason
// ("No such file or directory", "Permission denied", "not an ELF file", "truncated ELF file").
class ElfError : public std::runtime_error {
 public:
  ElfError(const std::string& path, const std::string& reason)
      : std::runtime_error(path + ": " + reason), path_(path), reason_(reason) {}
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_, reason_;
};

struct LoadSegment {
  uint64_t vaddr = 0;
  uint64_t memsz = 0;
  uint64_t offset = 0;
  uint64_t filesz = 0;
  uint64_t align = 0;
  uint32_t flags = 0;  // PF_X | PF_W | PF_R
  bool executable() const { return flags & 1u; }
};

struct ElfSection {
  std::string name;
  uint64_t addr = 0, size = 0, offset = 0;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t entsize = 0;
  uint64_t align = 0;  // sh_addralign
  uint32_t index = 0;  // section header index, as symbols' st_shndx refer to it
  uint32_t link = 0, info = 0;
  bool allocated() const { return flags & 0x2; }    // SHF_ALLOC
  bool executable() const { return flags & 0x4; }   // SHF_EXECINSTR
  bool has_file_data() const { return type != 8; }  // not SHT_NOBITS
  bool contains(uint64_t a) const { return a >= addr && a - addr < size; }
};

class ElfBinary {
 public:
  // Throws ElfError if the file cannot be opened or is not a readable ELF file.
  static std::shared_ptr<const ElfBinary> open(const std::string& path);
  ~ElfBinary();
  ElfBinary(const ElfBinary&) = delete;
  ElfBinary& operator=(const ElfBinary&) = delete;

  const std::string& path() const { return path_; }
  const BuildId& build_id() const { return build_id_; }  // empty if the file has no note
  uint16_t machine() const { return machine_; }          // EM_X86_64, EM_AARCH64, ...
  // The machine as `uname -m` (and perf.data's arch header) names it: "x86_64", "aarch64";
  // empty for a machine this table does not know.
  std::string_view machine_name() const;
  // Whether code for this machine runs on a machine `uname -m` calls `arch` (i686 and i386
  // are one, arm covers armv7l, ...). True when either is unknown: nothing can be said then.
  bool runs_on(std::string_view arch) const;
  uint16_t elf_type() const { return elf_type_; }  // ET_EXEC, ET_DYN
  bool is_64bit() const { return is_64bit_; }
  bool little_endian() const { return little_endian_; }
  uint64_t file_size() const { return file_size_; }
  const std::vector<LoadSegment>& load_segments() const { return load_segments_; }
  // Index 0 included. An ET_REL file's allocated sections have the addresses
  // mapper/relocatable_layout.h gives them, not sh_addr (0): the image addresses of a module.
  const std::vector<ElfSection>& sections() const { return sections_; }
  std::string debuglink() const { return debuglink_; }       // .gnu_debuglink file name, or empty
  uint32_t debuglink_crc() const { return debuglink_crc_; }  // its CRC-32, when debuglink set
  // Lowest p_vaddr of an executable PT_LOAD rounded down to 4 KiB (llvm-profgen's preferred
  // base), or of any PT_LOAD when none is executable.
  uint64_t preferred_base() const;

  // The first section of that name, or nullptr.
  const ElfSection* section_by_name(std::string_view name) const;
  // The SHF_ALLOC section of non-zero size whose [addr, addr + size) holds the address.
  const ElfSection* section_containing(uint64_t addr) const;
  // The section's bytes in the file (empty for SHT_NOBITS). Valid while this object lives.
  std::span<const uint8_t> section_bytes(const ElfSection& section) const;

  // Lets the kernel reclaim the pages of the file this object has read (MADV_PAGEOUT): a long
  // run keeps an image open between flushes, and the sections read at the last flush (symbols,
  // debug info) would otherwise stay resident however rarely they are needed. Contents never
  // change: a page is read again from the file when next touched. Best effort, nothing thrown.
  void release_file_pages() const;
  // Takes the file's pages out of this process (MADV_DONTNEED) and leaves them to the page cache:
  // for what is read once in a while, as a walk of debug info is, so that it does not stay in
  // the process's resident set. A page touched again comes back from the cache. Done only where
  // libelf mapped the file read-only (checked once in /proc/self/maps): there the advice cannot
  // lose anything. Best effort, nothing thrown.
  void unmap_file_pages() const;

  // libelf handle, for the symbol and debug-info readers in this module. Never null.
  struct ::Elf* elf() const {
    return elf_;
  }

 private:
  ElfBinary() = default;
  // Whether elf_rawfile() is a private read-only mapping of a file, found once.
  bool mapped_read_only() const;
  void read_identity();
  void read_segments();
  void read_sections();
  void read_build_id();
  void read_debuglink();

  std::string path_;
  mutable std::once_flag mapping_checked_;
  mutable bool mapped_read_only_ = false;
  int fd_ = -1;
  struct ::Elf* elf_ = nullptr;
  BuildId build_id_;
  uint16_t machine_ = 0, elf_type_ = 0;
  bool is_64bit_ = true;
  bool little_endian_ = true;
  uint64_t file_size_ = 0;
  std::vector<LoadSegment> load_segments_;
  std::vector<ElfSection> sections_;
  std::string debuglink_;
  uint32_t debuglink_crc_ = 0;
};

}  // namespace profcollect
