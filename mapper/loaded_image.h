// One image that gets a profile, opened once: its identity, ELF model, kind and address
// translation (mapper/image_translator.h), and -- loaded the first time something needs them -- its symbols (BOLT names), debug info
// (AutoFDO) and BOLT's basic blocks (branch fdata). Whatever cannot be loaded is said once, as a
// warning, and the image goes on without it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mapper/autofdo_binary.h"
#include "mapper/bb_addr_map.h"
#include "mapper/bolt_block_map.h"
#include "mapper/bolted_binary.h"
#include "mapper/elf_binary.h"
#include "mapper/exec_segment_map.h"
#include "mapper/image_translator.h"
#include "mapper/symbol_table.h"
#include "record/build_id.h"

namespace profcollect {

// Which file an image is: two mappings with the same identity share one profile.
struct BinaryIdentity {
  std::string path;
  BuildId build_id;
  uint64_t dev = 0, ino = 0;
  int64_t mtime_ns = 0;

  // A stable name of the image: "<basename>-<build-id>", or without a build-id
  // "<basename>-nobuildid-<16 hex digits>", a hash (FNV-1a) of its path, device, inode and mtime.
  // Profile directories are named by it.
  std::string directory_name() const;
};

// Something an image could not give (or a file that could not be made one), said once per image.
struct ImageWarning {
  std::string kind;    // no_debug_info, no_bolt_blocks, unreadable_binary, build_id_mismatch
  std::string path;    // the file
  std::string reason;  // why, in full
  // The whole sentence, as said alone.
  std::string message() const;
};

struct ImageLoadOptions {
  // Searched first, in order, for separate debug files; then the system's (/usr/lib/debug).
  std::vector<std::string> debug_dirs;
  // Threads that may read the debug info (AutofdoBinaryOptions::threads).
  unsigned debug_info_threads = 1;
  // Whether the debug info's answers are kept between renders (AutofdoBinaryOptions).
  bool keep_symbolized = true;
};

class LoadedImage {
 public:
  // The translation the file's own kind calls for (ImageTranslator::for_file).
  LoadedImage(std::shared_ptr<const ElfBinary> elf, BinaryIdentity identity,
              ImageLoadOptions options = {});
  // A translation given, e.g. a kernel module with the layout it was loaded with.
  LoadedImage(std::shared_ptr<const ElfBinary> elf, BinaryIdentity identity,
              ImageLoadOptions options, ImageTranslator translator);
  // The ELF file at `path`, its identity as given and as stat() sees it. Throws ElfError.
  static std::shared_ptr<LoadedImage> open_file(const std::string& path,
                                                ImageLoadOptions options = {});

  const BinaryIdentity& identity() const { return identity_; }
  const std::shared_ptr<const ElfBinary>& elf() const { return elf_; }
  ImageKind kind() const { return translator_.kind(); }
  const ImageTranslator& translator() const { return translator_; }
  const ExecSegmentMap& segments() const { return translator_.segments(); }

  const SymbolTable& symbols() const;
  // Null when the image has no usable debug info (the reason is a warning, or debug_error()).
  const AutofdoBinary* debug() const;
  const std::string& debug_error() const;
  // Null when the executable code cannot be split into BOLT's blocks.
  BoltBlockMap* blocks() const;
  // LLVM's basic-block address map (-fbasic-block-address-map), read on first use; null when
  // the binary has none or it cannot be read, bb_addr_map_error() saying why. Not a warning: most
  // binaries are built without one, and only a Propeller profile asks for it.
  const BbAddrMap* bb_addr_map() const;
  const std::string& bb_addr_map_error() const;
  // What BOLT left in the file, read the first time it is asked for: a BOLTed binary whose
  // address translation cannot be used is said once, as a warning (bolted_without_bat,
  // bat_unreadable), and profiled as untranslated.
  const BoltedBinary& bolted() const;

  // Frees what making profiles decoded on demand (instructions, DWARF units' address maps and
  // line tables, BOLT blocks), keeping what was read when the image was opened and a bounded
  // number of inline stacks already found, and lets the kernel reclaim the file pages read; the
  // rest is read again the next time a profile needs it. A long run calls it after each flush,
  // so that an image it keeps holds a bounded amount however many addresses it met, and the
  // next flush reads DWARF only for addresses it had not met.
  void drop_caches();

  // What symbolizing for AutoFDO cost since the last call (zeros without debug info).
  DwarfSymbolizer::Counts take_symbolization_counts();

  // Warnings not yet taken (each said once per image).
  std::vector<ImageWarning> take_warnings();

 private:
  std::shared_ptr<const ElfBinary> elf_;
  BinaryIdentity identity_;
  ImageLoadOptions options_;
  ImageTranslator translator_;
  mutable std::optional<SymbolTable> symbols_;
  mutable std::unique_ptr<AutofdoBinary> debug_;
  DwarfSymbolizer::Counts symbolization_taken_;  // counts already taken
  mutable bool debug_tried_ = false;
  mutable std::string debug_error_;
  mutable std::unique_ptr<BoltBlockMap> blocks_;
  mutable bool blocks_tried_ = false;
  mutable std::optional<BbAddrMap> bb_addr_map_;
  mutable bool bb_addr_map_tried_ = false;
  mutable std::string bb_addr_map_error_;
  mutable std::optional<BoltedBinary> bolted_;
  mutable std::vector<ImageWarning> warnings_;
};

}  // namespace profcollect
