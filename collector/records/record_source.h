// The one interface every record source implements: perf.data files (file, pipe, directory),
// live ring buffers, and perf script text. Consumers (process table, aggregators, report) see
// only this.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "record/record.h"
#include "record/build_id.h"
#include <functional>
#include <string_view>

namespace profcollect {

// What a source knows about the event it samples. `name` is the event as perf script prints it
// in BOLT's header line ("cpu-clock", "cycles:u", ...).
struct EventAttr {
  uint32_t type = 0;
  uint64_t config = 0;
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t branch_sample_type = 0;
  uint64_t sample_period_or_freq = 0;
  bool freq = false;
  bool sample_id_all = false;
  std::string name;
  std::vector<uint64_t> ids;
};

// A build-id the source learned about a file (perf.data build-id section, pipe-mode
// HEADER_BUILD_ID records, or MMAP2 records carrying one).
struct BuildIdEntry {
  uint32_t pid = 0;
  uint16_t cpumode_misc = 0;
  BuildId build_id;
  std::string filename;
};

// What decoding a recording's Arm SPE data (spe_sample_synthesizer.h) made of it.
struct SpeDecodeTally {
  uint64_t chunks = 0;                  // AUXTRACE records
  uint64_t records = 0;                 // SPE records decoded (each one sample)
  uint64_t taken_branches = 0;          // of which taken branches (each one branch edge)
  uint64_t records_without_pc = 0;      // complete records without a PC: no sample
  uint64_t records_dropped = 0;         // records cut by corrupt bytes or the end of a chunk
  uint64_t records_without_thread = 0;  // no CONTEXT packet and a per-CPU chunk
  uint64_t bytes_skipped = 0;           // corrupt bytes skipped to the next packet header
  uint64_t bytes_truncated = 0;         // bytes of records cut at the end of a chunk
  uint64_t bytes_undecoded = 0;         // chunks of a PMU the PMU mappings do not call SPE
};

// PERF_RECORD_AUX records of a recording: what the kernel said of each piece of AUX data it wrote
// (Arm SPE, Intel PT).
struct AuxTally {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t truncated = 0;   // the AUX area was full: data lost after these bytes
  uint64_t partial = 0;     // the hardware left a gap in the data
  uint64_t collisions = 0;  // samples collided (Arm SPE)
};

struct SessionInfo {
  std::vector<EventAttr> attrs;
  std::vector<BuildIdEntry> build_ids;  // may grow while reading (pipe mode sends them last)
  // The header says there is a build-id table, but it could not be read whole (a file cut short
  // in its feature area): files may then be matched by name only.
  bool build_id_table_damaged = false;
  // MMAP2 records flagged as carrying a build-id over a device/inode body (a kernel fault, see
  // RecordDecoder): their files are matched by name.
  uint64_t mmap2_false_build_id_flags = 0;
  std::string hostname, os_release, arch, perf_version;
  // HEADER_PMU_MAPPINGS: PMU type -> name.
  std::vector<std::pair<uint32_t, std::string>> pmu_mappings;
  // An AUXTRACE_INFO of the Arm SPE kind: the SPE data become samples (SpeDecodeTally).
  bool arm_spe = false;
  SpeDecodeTally spe;
  AuxTally aux;
  std::vector<std::string> cmdline;
};

// A source that cannot go on: names the file, the byte offset where the damage is, and why.
class SourceError : public std::runtime_error {
 public:
  SourceError(std::string file, uint64_t offset, std::string reason);
  const std::string& file() const { return file_; }
  uint64_t offset() const { return offset_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string file_;
  uint64_t offset_;
  std::string reason_;
};

// A source that cannot be opened at all (missing file, not a perf.data, no permission).
class OpenError : public std::runtime_error {
 public:
  OpenError(const std::string& file, const std::string& reason);
};

class RecordSource {
 public:
  virtual ~RecordSource() = default;

  // Fills `out` with the next record in time order and returns true; false at the end.
  // Throws SourceError on damaged input: everything returned before stays valid.
  virtual bool next(Record& out) = 0;

  virtual const SessionInfo& session() const = 0;

  // Bytes consumed so far and total (0 when unknown, e.g. a pipe), for progress reports.
  virtual uint64_t bytes_read() const = 0;
  virtual uint64_t bytes_total() const = 0;
};

// The recording's build-id for a path, from its build-id table (file header section, pipe
// records, MMAP2), as it stands when asked: in pipe mode the table grows at the end. Looked up
// once per mapped file, so a linear search is fine.
std::function<const BuildId*(std::string_view path)> recorded_build_ids(const RecordSource& source);

}  // namespace profcollect
