#include "mapper/loaded_image.h"

#include <sys/stat.h>

#include <cctype>
#include <cstdio>

namespace profcollect {

namespace {

uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::string basename_of(const std::string& p) {
  std::string b = p.substr(p.rfind('/') == std::string::npos ? 0 : p.rfind('/') + 1);
  // Portable names: no spaces or odd characters from "(deleted)" and the like.
  for (auto& c : b) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
          c == '+'))
      c = '_';
  }
  return b.empty() ? "unnamed" : b;
}

template <class Options>
Options search_options(const ImageLoadOptions& o) {
  Options out;
  out.debug_dirs.insert(out.debug_dirs.begin(), o.debug_dirs.begin(), o.debug_dirs.end());
  return out;
}

}  // namespace

std::string BinaryIdentity::directory_name() const {
  std::string base = basename_of(path);
  if (!build_id.empty()) return base + "-" + build_id.to_hex();
  uint64_t h = 1469598103934665603ull;
  h = fnv1a(h, path.data(), path.size());
  h = fnv1a(h, &dev, sizeof dev);
  h = fnv1a(h, &ino, sizeof ino);
  h = fnv1a(h, &mtime_ns, sizeof mtime_ns);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return base + "-nobuildid-" + buf;
}

LoadedImage::LoadedImage(std::shared_ptr<const ElfBinary> elf, BinaryIdentity identity,
                         ImageLoadOptions options)
    : elf_(std::move(elf)),
      identity_(std::move(identity)),
      options_(std::move(options)),
      translator_(ImageTranslator::for_file(*elf_)) {}

LoadedImage::LoadedImage(std::shared_ptr<const ElfBinary> elf, BinaryIdentity identity,
                         ImageLoadOptions options, ImageTranslator translator)
    : elf_(std::move(elf)),
      identity_(std::move(identity)),
      options_(std::move(options)),
      translator_(std::move(translator)) {}

std::shared_ptr<LoadedImage> LoadedImage::open_file(const std::string& path,
                                                    ImageLoadOptions options) {
  std::shared_ptr<const ElfBinary> elf = ElfBinary::open(path);
  BinaryIdentity id;
  id.path = path;
  id.build_id = elf->build_id();
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  return std::make_shared<LoadedImage>(std::move(elf), std::move(id), std::move(options));
}

const SymbolTable& LoadedImage::symbols() const {
  if (!symbols_)
    symbols_.emplace(SymbolTable::load(*elf_, search_options<SymbolSearchOptions>(options_)));
  return *symbols_;
}

const AutofdoBinary* LoadedImage::debug() const {
  if (!debug_tried_) {
    debug_tried_ = true;
    try {
      AutofdoBinaryOptions options = search_options<AutofdoBinaryOptions>(options_);
      options.threads = options_.debug_info_threads;
      options.keep_answers = options_.keep_symbolized;
      debug_ = AutofdoBinary::open(elf_, options);
    } catch (const std::exception& e) {
      // AutoFDO needs DWARF; the image still gets its BOLT profile.
      debug_error_ = e.what();
      if (bolted().status() != BatStatus::NotBolted) {
        debug_error_ +=
            " (BOLT wrote this binary: llvm-bolt strips debug info unless run with "
            "-update-debug-sections, which keeps it, describing the BOLTed code)";
      }
      warnings_.push_back({"no_debug_info", identity_.path, debug_error_});
    }
  }
  return debug_.get();
}

const std::string& LoadedImage::debug_error() const {
  debug();
  return debug_error_;
}

BoltBlockMap* LoadedImage::blocks() const {
  if (!blocks_tried_) {
    blocks_tried_ = true;
    try {
      blocks_ = std::make_unique<BoltBlockMap>(*elf_);
    } catch (const std::exception& e) {
      warnings_.push_back({"no_bolt_blocks", identity_.path, e.what()});
    }
  }
  return blocks_.get();
}

const BbAddrMap* LoadedImage::bb_addr_map() const {
  if (!bb_addr_map_tried_) {
    bb_addr_map_tried_ = true;
    try {
      bb_addr_map_ = BbAddrMap::load(*elf_);
    } catch (const std::exception& e) {
      bb_addr_map_error_ = e.what();
    }
  }
  return bb_addr_map_ ? &*bb_addr_map_ : nullptr;
}

const std::string& LoadedImage::bb_addr_map_error() const {
  bb_addr_map();
  return bb_addr_map_error_;
}

const BoltedBinary& LoadedImage::bolted() const {
  if (!bolted_) {
    bolted_.emplace(BoltedBinary::inspect(*elf_));
    if (bolted_->status() == BatStatus::NoTable)
      warnings_.push_back({"bolted_without_bat", identity_.path, bolted_->reason()});
    if (bolted_->status() == BatStatus::Unreadable)
      warnings_.push_back({"bat_unreadable", identity_.path, bolted_->reason()});
  }
  return *bolted_;
}

void LoadedImage::drop_caches() {
  // Only what was decoded on demand goes: the symbols, the debug-info index and the inline
  // stacks found (bounded) stay, as reading them again would cost a pass over the file at every
  // flush.
  if (debug_) debug_->drop_caches();
  if (blocks_) blocks_->drop_cached();
  // The block address map is one section's decoding, read again at the next Propeller render.
  bb_addr_map_.reset();
  bb_addr_map_tried_ = false;
  elf_->release_file_pages();
}

DwarfSymbolizer::Counts LoadedImage::take_symbolization_counts() {
  if (!debug_) return {};
  const DwarfSymbolizer::Counts now = debug_->dwarf().counts();
  const DwarfSymbolizer::Counts taken{now.addresses - symbolization_taken_.addresses,
                                      now.unit_walks - symbolization_taken_.unit_walks};
  symbolization_taken_ = now;
  return taken;
}

std::string ImageWarning::message() const {
  if (kind == "no_debug_info") return "no AutoFDO profile for " + path + ": " + reason;
  if (kind == "no_bolt_blocks")
    return path + ": no BOLT branch profile (" + reason + "); bolt.fdata holds its IP samples";
  if (kind == "bolted_without_bat") return path + ": " + reason;
  if (kind == "bat_unreadable") return path + ": " + reason + "; profiled as untranslated";
  return path + ": " + reason + "; its samples are counted as " + kind;
}

std::vector<ImageWarning> LoadedImage::take_warnings() {
  std::vector<ImageWarning> w;
  w.swap(warnings_);
  return w;
}

}  // namespace profcollect
