#include "collector/record_source.h"

namespace profcollect {

SourceError::SourceError(std::string file, uint64_t offset, std::string reason)
    : std::runtime_error(file + ": at byte " + std::to_string(offset) + ": " + reason),
      file_(std::move(file)),
      offset_(offset),
      reason_(std::move(reason)) {}

OpenError::OpenError(const std::string& file, const std::string& reason)
    : std::runtime_error(file + ": " + reason) {}

}  // namespace profcollect
