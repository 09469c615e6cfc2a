// Fuzz target: the files an earlier run left in a profile directory, read back by the profile
// directory codec (output/profile_directory.h) as each of its readers reads them -- meta.json,
// bolt.fdata, bolt.nolbr.fdata, samples.ip, samples.branch and DIR/collection.json. The input's
// parts (tests/fuzz/fuzz_support.h) are those files in that order; an empty or missing part
// leaves its file out. The directory is read with every strictness and reported
// (collector/cli/report_directory.h), then a flush (ProfileStore::write_binary) adds a run to
// it, and what that flush wrote must read back whole by merge's strict rules. The only
// acceptable failures are CliError from the report and OutputError from the codec and the store.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "collector/cli/cli_error.h"
#include "collector/cli/report_directory.h"
#include "output/atomic_file.h"
#include "output/branch_samples_file.h"
#include "output/fdata_reader.h"
#include "output/profile_directory.h"
#include "output/profile_store.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace profcollect;

constexpr const char* kFiles[] = {"meta.json", "bolt.fdata", "bolt.nolbr.fdata", "samples.ip",
                                  "samples.branch"};

BinaryIdentity identity() {
  BinaryIdentity id;
  id.path = "/usr/bin/fuzzed";
  id.build_id = *BuildId::from_hex("00112233445566778899aabbccddeeff00112233");
  return id;
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
  s.counts.no_lbr.events = {"cpu-clock:"};
  s.counts.no_lbr.counts[{"main", 0x10}] = 3;
  s.samples = 3;
  s.first_sample_ns = 1000;
  s.last_sample_ns = 2000;
  s.event = "cpu-clock";
  s.counts.ips.add(0x401010, 3);
  if (branches) {
    run_branches.stacks = 1;
    run_branches.ranges.ranges[{0x401000, 0x401010}] = 1;
    s.counts.branches = run_branches;
  }
  s.render = [](const ImageCounts& c) {
    RenderedProfiles r;
    // As the renderer without a BOLT block map: no_lbr, whatever the branch stacks.
    r.files.emplace_back("bolt.fdata", format_no_lbr_fdata(c.no_lbr));
    return r;
  };
  store.write_binary(s);
  for (const std::string& w : store.take_warnings()) fuzz::touch(w);

  // What the flush wrote reads back whole, by merge's rules.
  const DirectoryHandle root = DirectoryHandle::open_path(dir, 0700);
  const std::optional<DirectoryHandle> written =
      root.open_subdirectory(identity().directory_name());
  if (!written) __builtin_trap();
  try {
    const ProfileDirectory read = read_profile_directory(*written, DirectoryStrictness::Merge);
    if (read.no_lbr_file.empty() || read.counts.ips.empty()) __builtin_trap();
    if (branches && !read.counts.branches) __builtin_trap();
  } catch (const OutputError&) {
    __builtin_trap();
  }
}

// The fuzzed directory read with each strictness: Report and Store never throw for what is in
// it (the files' faults are returned), Merge throws OutputError.
void read_each_way(const std::string& subdir) {
  const DirectoryHandle handle = DirectoryHandle::open_path(subdir, 0700);
  for (const DirectoryStrictness s : {DirectoryStrictness::Report, DirectoryStrictness::Merge}) {
    try {
      const ProfileDirectory read = read_profile_directory(handle, s);
      for (const DirectoryFault& f : read.faults) fuzz::touch(f.text());
    } catch (const OutputError&) {
      if (s != DirectoryStrictness::Merge) __builtin_trap();
    }
  }
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
  read_each_way(subdir);
  report(dir, choice & 1);
  try {
    flush(dir, choice & 2);
    report(dir, choice & 1);
  } catch (const OutputError&) {
  }
  scratch.clear();
  return 0;
}
