#include "collector/records/record_source.h"

namespace profcollect {

SourceError::SourceError(std::string file, uint64_t offset, std::string reason)
    : std::runtime_error(file + ": at byte " + std::to_string(offset) + ": " + reason),
      file_(std::move(file)),
      offset_(offset),
      reason_(std::move(reason)) {}

OpenError::OpenError(const std::string& file, const std::string& reason)
    : std::runtime_error(file + ": " + reason) {}

std::function<const BuildId*(std::string_view path)> recorded_build_ids(
    const RecordSource& source) {
  return [&source](std::string_view path) -> const BuildId* {
    for (const auto& e : source.session().build_ids) {
      if (e.filename == path) return &e.build_id;
    }
    return nullptr;
  };
}

}  // namespace profcollect
