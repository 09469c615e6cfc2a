// What the fuzz targets (tests/fuzz/*_fuzz.cpp) share: putting an input where the library reads
// files from (a memfd opened by its /proc/self/fd path, or files in a scratch directory), cutting
// one input into several files, and reading every byte a returned view points at, so that
// AddressSanitizer sees a view that reaches past its buffer even when the library itself never
// reads that far.
//
// Header-only: each target is one translation unit, built with libFuzzer or, in the normal
// build, with tests/fuzz/replay_main.cpp.
#pragma once

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "record/record.h"
#include "collector/records/record_source.h"
#include "mapper/process_table.h"

namespace profcollect::fuzz {

// Separates the files of a multi-file input (a binary and its .dwo or debug files, the files of
// a profile directory). A line of its own, so that text inputs stay readable.
inline constexpr std::string_view kPartSeparator = "\n--- profcollect fuzz part ---\n";

inline std::vector<std::span<const uint8_t>> split_parts(const uint8_t* data, size_t size) {
  std::vector<std::span<const uint8_t>> parts;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (;;) {
    const size_t at = rest.find(kPartSeparator);
    const std::string_view part = rest.substr(0, at);
    parts.emplace_back(reinterpret_cast<const uint8_t*>(part.data()), part.size());
    if (at == std::string_view::npos) break;
    rest.remove_prefix(at + kPartSeparator.size());
  }
  return parts;
}

// Reads every byte: the xor goes to a volatile, so no read can be left out.
inline volatile uint8_t touch_sink;
inline void touch(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint8_t x = 0;
  for (size_t i = 0; i < size; ++i) x ^= p[i];
  touch_sink = x;
}
inline void touch(std::string_view s) { touch(s.data(), s.size()); }
template <typename T>
void touch(std::span<const T> s) {
  touch(s.data(), s.size_bytes());
}

inline bool write_all(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The input as a regular file without touching a disk: what ElfBinary, the perf.data reader and
// the perf script reader open by path.
class MemoryFile {
 public:
  MemoryFile(std::span<const uint8_t> bytes, const char* name)
      : fd_(memfd_create(name, MFD_CLOEXEC)) {
    if (fd_ < 0 || !write_all(fd_, bytes.data(), bytes.size())) std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

// A directory of this process for inputs that must be several real files side by side (a
// binary and the .dwo files it names, a profile directory). Best on tmpfs, since the profile
// store fsyncs what it writes. clear() empties it, so that no input sees the files of the one
// before.
class ScratchDirectory {
 public:
  static ScratchDirectory& get() {
    static ScratchDirectory dir;
    return dir;
  }
  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

  void write(std::string_view name, std::span<const uint8_t> bytes) const {
    const std::string p = file(name);
    FILE* f = std::fopen(p.c_str(), "wb");
    if (f == nullptr) std::abort();
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
      std::abort();
    std::fclose(f);
  }
  void clear() const {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(path_, ec))
      std::filesystem::remove_all(entry.path(), ec);
  }

 private:
  ScratchDirectory() {
    // $TMPDIR first (tests/fuzz/run.sh points it at a directory it removes: libFuzzer may end a
    // process without running destructors), then tmpfs, then /tmp.
    auto writable_dir = [](const char* dir) {
      struct stat st {};
      return dir != nullptr && *dir != '\0' && ::stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
             ::access(dir, W_OK) == 0;
    };
    const char* tmpdir = std::getenv("TMPDIR");
    const char* base = writable_dir(tmpdir)       ? tmpdir
                       : writable_dir("/dev/shm") ? "/dev/shm"
                                                  : "/tmp";
    std::string templ = std::string(base) + "/profcollect-fuzz-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) std::abort();
    path_ = templ;
  }
  ~ScratchDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path_;
};

// A file name an input may give one of its parts: one plain component, so that nothing is
// written outside the scratch directory.
inline bool safe_file_name(std::string_view name) {
  if (name.empty() || name.size() > 100 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || c == '+';
    if (!ok) return false;
  }
  return true;
}

// Writes an input's files into `dir`: the first part as `main_name`, each further part, "NAME\n"
// then its bytes, as NAME (parts without a safe name, or named like the main file, are left out).
inline void write_input_files(const ScratchDirectory& dir, std::string_view main_name,
                              const std::vector<std::span<const uint8_t>>& parts) {
  dir.write(main_name, parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string_view part(reinterpret_cast<const char*>(parts[i].data()), parts[i].size());
    const size_t nl = part.find('\n');
    if (nl == std::string_view::npos) continue;
    const std::string_view name = part.substr(0, nl);
    if (!safe_file_name(name) || name == main_name) continue;
    dir.write(name, parts[i].subspan(nl + 1));
  }
}

// Reads every record of `source` to the end, as a consumer would: the views are read whole, the
// process table is fed, and every sample address and branch end is looked up in it. Throws what
// the source throws (SourceError).
inline void consume_records(RecordSource& source) {
  ProcessTable processes;
  Record record;
  while (source.next(record)) {
    processes.update(record);
    if (const auto* s = std::get_if<SampleRecord>(&record)) {
      touch(s->branches);
      processes.find(s->pid, s->ip, s->cpumode);
      for (const BranchEntry& b : s->branches) {
        processes.find(s->pid, b.from, CpuMode::User);
        processes.find(s->pid, b.to, CpuMode::User);
      }
      if (s->attr_index >= source.session().attrs.size()) __builtin_trap();
    } else if (const auto* m = std::get_if<MmapRecord>(&record)) {
      touch(m->filename);
    } else if (const auto* c = std::get_if<CommRecord>(&record)) {
      touch(c->comm);
    }
  }
  const SessionInfo& info = source.session();
  for (const EventAttr& attr : info.attrs) touch(attr.name);
  for (const BuildIdEntry& b : info.build_ids) touch(b.filename);
  for (const std::string& arg : info.cmdline) touch(arg);
  for (const Dso& dso : processes.dsos()) touch(dso.path);
  // Progress never passes the end.
  if (source.bytes_total() != 0 && source.bytes_read() > source.bytes_total()) __builtin_trap();
}

}  // namespace profcollect::fuzz
