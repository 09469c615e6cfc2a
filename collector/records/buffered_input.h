// Sequential, buffered reading of one perf.data input (a regular file, a FIFO, or standard
// input) between two byte offsets. The buffer is allocated once and never grows: a perf record
// is at most 64 KiB (its size is a u16), so a window of kBufferSize always holds a whole one.
// Memory therefore does not depend on the file's size. Payloads that are not records (AUXTRACE
// data, tracing data) are skipped without being copied.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace profcollect {

// An open input file descriptor with what is known about it.
class InputFile {
 public:
  // Opens `path` read-only; "-" means standard input. Throws OpenError.
  static std::shared_ptr<InputFile> open(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }
  bool seekable() const { return seekable_; }  // a regular file: pread works
  uint64_t size() const { return size_; }      // 0 when not a regular file

  // Reads exactly `n` bytes at `offset` of a seekable file; false if the file is shorter.
  bool pread_exact(void* dst, size_t n, uint64_t offset) const;

 private:
  InputFile(int fd, std::string name, bool owns);
  int fd_;
  bool owns_;
  bool seekable_ = false;
  uint64_t size_ = 0;
  std::string name_;
};

class BufferedInput {
 public:
  static constexpr size_t kBufferSize = 1 << 20;
  static constexpr uint64_t kToEnd = UINT64_MAX;

  // Reads `file` from byte `start` up to `end` (exclusive; kToEnd = end of file). For a
  // non-seekable file, `start` must be the file's current position.
  BufferedInput(std::shared_ptr<InputFile> file, uint64_t start, uint64_t end);

  // Makes up to `n` bytes at the cursor contiguous; returns how many are available, fewer than
  // `n` only at the end of the input. n must be <= kBufferSize.
  size_t fill(size_t n);
  const uint8_t* data() const { return buffer_.data() + begin_; }
  void consume(size_t n);
  // Skips `n` bytes; returns how many were skipped (fewer at the end of the input).
  uint64_t skip(uint64_t n);

  uint64_t offset() const { return offset_; }  // file offset of the cursor
  uint64_t consumed() const { return offset_ - start_; }
  uint64_t limit() const { return limit_; }
  const InputFile& file() const { return *file_; }

 private:
  size_t read_some(uint8_t* dst, size_t n);

  std::shared_ptr<InputFile> file_;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0, end_ = 0;  // valid bytes are buffer_[begin_, end_)
  uint64_t start_;
  uint64_t offset_;       // file offset of buffer_[begin_]
  uint64_t read_offset_;  // file offset of buffer_[end_]
  uint64_t limit_;
  bool eof_ = false;
};

}  // namespace profcollect
