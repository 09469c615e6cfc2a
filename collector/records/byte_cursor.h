// A bounds-checked little-endian reader over one record's bytes. Every field the decoders read
// goes through it, so a record that claims more than it holds fails with a reason instead of
// reading past its end. Lives on the stack; allocates nothing.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "collector/records/perf_abi.h"

namespace profcollect {

// A record whose contents contradict its own size or its attr. The reader turns it into a
// SourceError naming the file and offset.
class RecordFormatError : public std::runtime_error {
 public:
  explicit RecordFormatError(const std::string& reason) : std::runtime_error(reason) {}
};

class ByteCursor {
 public:
  ByteCursor(std::span<const uint8_t> bytes, const char* what) : bytes_(bytes), what_(what) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  const uint8_t* here() const { return bytes_.data() + pos_; }

  template <typename T>
  T read() {
    require(sizeof(T));
    T v = perf_abi::load<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  uint64_t u64() { return read<uint64_t>(); }
  uint32_t u32() { return read<uint32_t>(); }

  void skip(uint64_t n) {
    require(n);
    pos_ += static_cast<size_t>(n);
  }
  // Skips n elements of `size` bytes, checking the product for overflow first.
  void skip_array(uint64_t n, size_t size) {
    if (n > remaining() / size) fail_overrun(n * size);
    pos_ += static_cast<size_t>(n * size);
  }
  std::span<const uint8_t> bytes(uint64_t n) {
    require(n);
    auto s = bytes_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }

 private:
  void require(uint64_t n) {
    if (n > remaining()) fail_overrun(n);
  }
  [[noreturn]] void fail_overrun(uint64_t wanted) const {
    throw RecordFormatError(std::string(what_) + ": field of " + std::to_string(wanted) +
                            " bytes at record offset " + std::to_string(pos_) + " overruns the " +
                            std::to_string(bytes_.size()) + "-byte record");
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  const char* what_;
};

// A NUL-terminated string inside a fixed field: up to the first NUL or the field's end.
inline std::string_view bounded_string(std::span<const uint8_t> field) {
  const char* p = reinterpret_cast<const char*>(field.data());
  size_t n = 0;
  while (n < field.size() && p[n] != '\0') ++n;
  return {p, n};
}

}  // namespace profcollect
