// Fuzz target: the files an earlier run left in a profile directory, read back as the next run
// and `profcollect report DIR` read them -- meta.json, bolt.fdata, bolt.nolbr.fdata, samples.ip,
// samples.branch and DIR/collection.json. The input's parts (tests/fuzz/fuzz_support.h) are
// those files in that order; an empty or missing part leaves its file out. The directory is reported
// (collector/cli/report_directory.h), then a flush (ProfileStore::write_binary) adds a run to
// it, and what that flush wrote must read back. The only acceptable failures are CliError from
// the report and OutputError from the store.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "collector/cli/cli_error.h"
#include "collector/cli/report_directory.h"
#include "output/atomic_file.h"
#include "output/branch_samples_file.h"
#include "output/fdata_reader.h"
#include "output/profile_store.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace profcollect;

constexpr const char* kFiles[] = {"meta.json", "bolt.fdata", "bolt.nolbr.fdata", "samples.ip", "samples.branch"};

BinaryIdentity identity() {
  BinaryIdentity id;
  id.path = "/usr/bin/fuzzed";
  id.build_id = *BuildId::from_hex("00112233445566778899aabbccddeeff00112233");
  return id;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void report(const std::string& dir, bool json) {
  ReportOptions options;
  options.input = dir;
  options.json = json;
  options.top = 5;
  try {
    run_directory_report(options);
  } catch (const CliError&) {
  }
}

// One flush of a run with IP samples, and with branch stacks when `branches`.
void flush(const std::string& dir, bool branches) {
  ProfileStore store(dir);
  BranchSamples run_branches;
  BinaryProfileSnapshot s;
  s.identity = identity();
  s.fdata.events = {"cpu-clock:"};
  s.fdata.counts[{"main", 0x10}] = 3;
  s.samples = 3;
  s.first_sample_ns = 1000;
  s.last_sample_ns = 2000;
  s.event = "cpu-clock";
  s.ips.add(0x401010, 3);
  if (branches) {
    run_branches.stacks = 1;
    run_branches.ranges.ranges[{0x401000, 0x401010}] = 1;
    s.branches = &run_branches;
  }
  s.render = [](const ImageCounts& c) {
    RenderedProfiles r;
    r.files.emplace_back("bolt.fdata", c.branches ? format_branch_samples(*c.branches) : format_no_lbr_fdata(c.no_lbr));
    return r;
  };
  store.write_binary(s);
  for (const std::string& w : store.take_warnings()) fuzz::touch(w);

  // What the flush wrote reads back.
  const std::string subdir = dir + "/" + identity().directory_name();
  const auto meta = nlohmann::json::parse(read_file(subdir + "/meta.json"), nullptr, false);
  if (!meta.is_object()) __builtin_trap();
  const bool branch_mode = meta.value("bolt_fdata", "") == "branch";
  std::string error;
  if (!parse_no_lbr_fdata(read_file(subdir + (branch_mode ? "/bolt.nolbr.fdata" : "/bolt.fdata")), &error))
    __builtin_trap();
  if (branch_mode && !parse_branch_samples(read_file(subdir + "/samples.branch"), &error)) __builtin_trap();
}

// The report prints; the fuzzer's own output is on stderr.
void silence_stdout() {
  static const bool done = [] {
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, STDOUT_FILENO) < 0) std::abort();
    ::close(null);
    return true;
  }();
  (void)done;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  silence_stdout();
  const auto& scratch = fuzz::ScratchDirectory::get();
  const std::string dir = scratch.path() + "/out";
  const std::string subdir = dir + "/" + identity().directory_name();
  std::filesystem::create_directories(subdir);
  const auto parts = fuzz::split_parts(data, size);
  // The input's first byte (of the first part) chooses a branch run and a JSON report.
  const uint8_t choice = size > 0 ? data[0] : 0;
  for (size_t i = 0; i < parts.size() && i < std::size(kFiles) + 1; ++i) {
    if (parts[i].empty()) continue;
    if (i < std::size(kFiles)) {
      scratch.write("out/" + identity().directory_name() + "/" + kFiles[i], parts[i]);
    } else {
      scratch.write("out/collection.json", parts[i]);
    }
  }
  report(dir, choice & 1);
  try {
    flush(dir, choice & 2);
    report(dir, choice & 1);
  } catch (const OutputError&) {
  }
  scratch.clear();
  return 0;
}
