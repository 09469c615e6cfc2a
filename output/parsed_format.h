// The total and the merger of a format whose files a reader parses into one type T: the helpers
// each format file (output/format_NAME.cpp) builds its registry entry's `total` and `merger` from.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "output/atomic_file.h"
#include "output/count_sum.h"
#include "output/profile_format.h"

namespace profcollect {

template <typename T>
struct ParsedFormat {
  std::optional<T> (*parse)(std::string_view text, std::string* why);
  void (*sum)(CheckedSum& sum, const T& parsed);  // every count of a file, for its total
  void (*add)(T& into, const T& from);            // merge
  std::string (*write)(const T& merged);
};

// `format`'s total of `text` (the codec's check), or nullopt with `why`.
template <typename T>
std::optional<uint64_t> parsed_total(const ParsedFormat<T>& format, std::string_view text,
                                     std::string* why) {
  const std::optional<T> parsed = format.parse(text, why);
  if (!parsed) return std::nullopt;
  CheckedSum sum;
  format.sum(sum, *parsed);
  if (sum.overflow) {
    *why = "its counts add up past 2^64";
    return std::nullopt;
  }
  return sum.value;
}

template <typename T>
class ParsedMerger final : public FormatMerger {
 public:
  explicit ParsedMerger(const ParsedFormat<T>& format) : format_(format) {}
  void add(std::string_view text, const std::string& where) override {
    std::string why;
    const std::optional<T> parsed = format_.parse(text, &why);
    if (!parsed) throw OutputError(where, why);
    format_.add(sum_, *parsed);
  }
  std::string text() const override { return format_.write(sum_); }

 private:
  const ParsedFormat<T>& format_;
  T sum_{};
};

template <typename T>
std::unique_ptr<FormatMerger> parsed_merger(const ParsedFormat<T>& format) {
  return std::make_unique<ParsedMerger<T>>(format);
}

}  // namespace profcollect
