// Puts perf's view of a perf.data and ours into one comparable form: canonical text lines per
// record kind, built from `perf script` output on one side and from our RecordSource on the
// other (printed the way perf 6.1 prints them), plus the per-type record counts of
// `perf report -D`. Tests compare the two as sorted multisets.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collector/records/record_source.h"

namespace profcollect::test {

// The perf script command line the comparison uses (its output is what parse_perf_script
// reads).
std::vector<std::string> perf_script_command(const std::string& perf_data);

struct CanonicalRecords {
  // In the order read (perf script prints in its time order); tests sort copies to compare.
  // "<event> <pid>/<tid> <sec.usec> <period> <ip> <from/to/M|P|-/X|-/A|-/cycles/type>..."
  std::vector<std::string> samples;
  // "<sec.usec> PERF_RECORD_MMAP pid/tid: [...]: x filename" (and MMAP2, as perf prints them)
  std::vector<std::string> mmaps;
  // "<sec.usec> PERF_RECORD_COMM...", FORK, EXIT
  std::vector<std::string> tasks;
  size_t size() const { return samples.size() + mmaps.size() + tasks.size(); }
};

CanonicalRecords parse_perf_script(const std::string& text);

// Everything perf reports besides the script lines: per-type counts from `perf report -D`'s
// "Aggregated stats" (absent when perf stopped on an error) and the lost-sample totals.
struct PerfDump {
  bool has_stats = false;
  std::map<std::string, uint64_t> counts;  // "SAMPLE" -> n, "MMAP2" -> n, ...
  uint64_t lost_samples = 0;               // sum over PERF_RECORD_LOST_SAMPLES
  uint64_t lost = 0;                       // sum over PERF_RECORD_LOST
};
std::vector<std::string> perf_dump_command(const std::string& perf_data);
PerfDump parse_perf_dump(const std::string& text);

// Our records, in the same forms. Reads `source` to its end; a SourceError is caught and
// returned in `error` (the records before it are kept).
struct OurRecords {
  CanonicalRecords canonical;
  std::map<std::string, uint64_t> counts;  // same names as PerfDump::counts
  uint64_t lost_samples = 0, lost = 0;
  // Records with a time earlier than a timed record returned before them (0 when in order).
  uint64_t time_inversions = 0;
  // The first of them: its record type, time and the latest time before it ("" when none).
  std::string first_inversion;
  std::optional<SourceError> error;
};
OurRecords collect_our_records(RecordSource& source);

// "" when our per-type record counts and lost totals equal perf's (every kernel record type perf
// counted, nothing more), else the difference. `dump` must have stats.
std::string count_difference(const PerfDump& dump, const OurRecords& ours);

// "" when equal, else how the sorted multisets differ (counts and the first differing lines).
std::string multiset_difference(const std::string& what, std::vector<std::string> perf,
                                std::vector<std::string> ours);

// `perf evlist -v -i FILE` lines that describe an attr ("name: type: 4, size: 128, config: 0xc4,
// ..."), and the value perf prints after "key: " in one of them ("" when absent).
std::vector<std::string> perf_evlist(const std::string& perf_data);
std::string evlist_field(const std::string& evlist_line, const std::string& key);

// The name perf gives kernel record type `type` ("MMAP", "SAMPLE", ...).
std::string perf_record_type_name(uint32_t type);

}  // namespace profcollect::test
