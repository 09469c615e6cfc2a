// Fuzz target: `profcollect merge` (output/profile_merge.h) reading the output directories of
// two hosts, each with one binary's directory of every file merge reads -- meta.json,
// bolt.fdata, bolt.nolbr.fdata, bolt.preagg, autofdo.prof, samples.ip and samples.branch --
// among them the two that no other target reads: bolt.preagg and autofdo.prof. The input's parts
// (tests/fuzz/fuzz_support.h) are the first host's seven files in that order, then the second
// host's; an empty or missing part leaves its file out (a host without a file of the binary
// adds nothing). The only acceptable failure is OutputError. What a merge wrote must merge
// again, alone, into the same files: merge reads back everything it writes.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "output/atomic_file.h"
#include "output/profile_merge.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace profcollect;
namespace fs = std::filesystem;

constexpr const char* kFiles[] = {"meta.json",    "bolt.fdata", "bolt.nolbr.fdata", "bolt.preagg",
                                  "autofdo.prof", "samples.ip", "samples.branch"};
// Named as a live collection names a binary's directory (basename and build-id); the build-id of
// meta.json decides whether the two hosts' directories may merge.
constexpr const char* kBinaryDirectory = "fuzzed-00112233445566778899aabbccddeeff00112233";

// Every regular file under `dir` (relative path -> contents).
std::map<std::string, std::string> files_under(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out[fs::relative(entry.path(), dir).generic_string()] = ss.str();
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& scratch = fuzz::ScratchDirectory::get();
  const auto parts = fuzz::split_parts(data, size);
  const std::string hosts[] = {scratch.file("host1"), scratch.file("host2")};
  for (const std::string& host : hosts) fs::create_directories(host + "/" + kBinaryDirectory);
  for (size_t i = 0; i < parts.size() && i < 2 * std::size(kFiles); ++i) {
    if (parts[i].empty()) continue;
    const std::string host = i < std::size(kFiles) ? "host1" : "host2";
    scratch.write(host + "/" + kBinaryDirectory + "/" + kFiles[i % std::size(kFiles)], parts[i]);
  }
  const std::string merged = scratch.file("merged"), again = scratch.file("again");
  bool wrote = false;
  try {
    const MergeSummary summary = merge_profile_directories({hosts[0], hosts[1]}, merged);
    for (const std::string& w : summary.warnings) fuzz::touch(w);
    wrote = true;
  } catch (const OutputError& e) {
    fuzz::touch(e.what());
  }
  if (wrote) {
    try {
      merge_profile_directories({merged}, again);
    } catch (const OutputError&) {
      __builtin_trap();  // merge wrote what it cannot read
    }
    if (files_under(merged) != files_under(again)) __builtin_trap();
  }
  scratch.clear();
  return 0;
}
