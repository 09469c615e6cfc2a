#include "collector/records/buffered_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "collector/records/record_source.h"

namespace profcollect {

std::shared_ptr<InputFile> InputFile::open(const std::string& path) {
  if (path == "-") return std::shared_ptr<InputFile>(new InputFile(STDIN_FILENO, "-", false));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw OpenError(path, std::strerror(errno));
  return std::shared_ptr<InputFile>(new InputFile(fd, path, true));
}

InputFile::InputFile(int fd, std::string name, bool owns)
    : fd_(fd), owns_(owns), name_(std::move(name)) {
  struct stat st;
  if (fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    seekable_ = true;
    size_ = static_cast<uint64_t>(st.st_size);
  }
}

InputFile::~InputFile() {
  if (owns_) ::close(fd_);
}

bool InputFile::pread_exact(void* dst, size_t n, uint64_t offset) const {
  auto* out = static_cast<uint8_t*>(dst);
  while (n > 0) {
    ssize_t r = ::pread(fd_, out, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    out += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return true;
}

BufferedInput::BufferedInput(std::shared_ptr<InputFile> file, uint64_t start, uint64_t end)
    : file_(std::move(file)),
      buffer_(kBufferSize),
      start_(start),
      offset_(start),
      read_offset_(start),
      limit_(end) {}

size_t BufferedInput::read_some(uint8_t* dst, size_t n) {
  if (limit_ != kToEnd) n = static_cast<size_t>(std::min<uint64_t>(n, limit_ - read_offset_));
  if (n == 0) return 0;
  for (;;) {
    ssize_t r = file_->seekable() ? ::pread(file_->fd(), dst, n, static_cast<off_t>(read_offset_))
                                  : ::read(file_->fd(), dst, n);
    if (r < 0 && errno == EINTR) continue;
    // A read error ends the input like EOF does; the record layer then reports the record it
    // could not complete, at its offset.
    if (r <= 0) return 0;
    read_offset_ += static_cast<uint64_t>(r);
    return static_cast<size_t>(r);
  }
}

size_t BufferedInput::fill(size_t n) {
  while (end_ - begin_ < n && !eof_) {
    if (begin_ + n > buffer_.size()) {  // not enough room behind the cursor: move to the front
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    size_t got = read_some(buffer_.data() + end_, buffer_.size() - end_);
    if (got == 0) eof_ = true;
    end_ += got;
  }
  return std::min(n, end_ - begin_);
}

void BufferedInput::consume(size_t n) {
  begin_ += n;
  offset_ += n;
}

uint64_t BufferedInput::skip(uint64_t n) {
  uint64_t buffered = std::min<uint64_t>(n, end_ - begin_);
  consume(static_cast<size_t>(buffered));
  uint64_t done = buffered;
  if (done == n) return done;
  begin_ = end_ = 0;
  if (file_->seekable()) {
    uint64_t left = n - done;
    uint64_t stop = limit_ == kToEnd ? file_->size() : std::min(limit_, file_->size());
    uint64_t can = stop > read_offset_ ? std::min(left, stop - read_offset_) : 0;
    read_offset_ += can;
    offset_ += can;
    return done + can;
  }
  while (done < n) {  // a pipe: read and drop
    size_t want = static_cast<size_t>(std::min<uint64_t>(n - done, buffer_.size()));
    size_t got = read_some(buffer_.data(), want);
    if (got == 0) {
      eof_ = true;
      break;
    }
    done += got;
    offset_ += got;
  }
  return done;
}

}  // namespace profcollect
