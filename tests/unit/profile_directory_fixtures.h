// Profile directories made by code for the codec's tests (output/profile_directory.h): written
// by the profile store as a live run writes them, then damaged the ways a crash, a full disk or
// a careless copy damages them.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "output/profile_store.h"

namespace profcollect::test {

namespace fs = std::filesystem;

struct ScratchDirectory {
  fs::path path;
  ScratchDirectory() {
    char tmpl[] = "/tmp/profcollect-codec-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~ScratchDirectory() { fs::remove_all(path); }
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

// The text without its last line: a file truncated at a line boundary.
inline std::string without_last_line(const std::string& text) {
  const size_t end = text.rfind('\n', text.size() - 2);
  return text.substr(0, end == std::string::npos ? 0 : end + 1);
}

// The text cut inside its last line.
inline std::string cut_mid_line(const std::string& text) { return text.substr(0, text.size() - 2); }

constexpr const char* kBuildId = "00112233445566778899aabbccddeeff00112233";
constexpr const char* kOtherBuildId = "ffeeddccbbaa99887766554433221100ffeeddcc";

inline BinaryIdentity app(const char* build_id = kBuildId) {
  BinaryIdentity id;
  id.path = "/usr/bin/app";
  id.build_id = *BuildId::from_hex(build_id);
  return id;
}

// One run's samples of /usr/bin/app: `main` and `helper` (two lines in each file, so that one
// can be lost at a line boundary), `scale` times 3 and 4.
inline BinaryProfileSnapshot app_run(uint64_t scale = 1, const char* build_id = kBuildId) {
  BinaryProfileSnapshot s;
  s.identity = app(build_id);
  s.counts.no_lbr.events = {"cpu-clock:"};
  s.counts.no_lbr.counts[{"main", 0x10}] = 3 * scale;
  s.counts.no_lbr.counts[{"helper", 0x20}] = 4 * scale;
  s.samples = 7 * scale;
  s.first_sample_ns = 1000;
  s.last_sample_ns = 2000;
  s.event = "cpu-clock";
  s.events = {"cpu-clock"};
  s.counts.ips.add(0x1010, 3 * scale);
  s.counts.ips.add(0x1020, 4 * scale);
  return s;
}

// OUTPUT/app-<build-id>/ as one flush of `run` writes it; its path.
inline fs::path write_app(const fs::path& output, const BinaryProfileSnapshot& run) {
  ProfileStore store(output.string());
  store.write_binary(run);
  return output / run.identity.directory_name();
}

}  // namespace profcollect::test
