// Live collection's session, pipeline, store and renderer, fed a recording instead of ring
// buffers (collector/pipeline/replay_engine.h): one flush of the whole recording into `output_dir`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "collector/session/collection_session.h"

namespace profcollect::test {

struct ReplayResult {
  PipelineCounts counts;
  std::vector<std::string> warnings;  // and errors
};

// Profiles `binaries` (every binary when empty) of the recording into output_dir.
ReplayResult replay_into(const std::filesystem::path& recording,
                         const std::filesystem::path& output_dir,
                         const std::vector<std::string>& binaries, bool unsymbolized = false);

}  // namespace profcollect::test
