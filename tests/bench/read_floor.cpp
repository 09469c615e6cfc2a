// The floor under `profcollect convert`: reading a perf.data through the record source alone
// (the file from page cache, each record decoded once, in time order), with nothing resolved,
// aggregated or written. tests/bench/convert_bench.sh times it beside convert.
//
//   read_floor PERF.DATA   prints the number of records and samples read
#include <cstdio>
#include <exception>

#include "collector/input/perf_data_reader.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: read_floor PERF.DATA\n");
    return 2;
  }
  try {
    auto source = profcollect::open_perf_data(argv[1]);
    profcollect::Record record;
    unsigned long long records = 0, samples = 0;
    while (source->next(record)) {
      ++records;
      if (std::holds_alternative<profcollect::SampleRecord>(record)) ++samples;
    }
    std::printf("%llu records, %llu samples\n", records, samples);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "read_floor: %s\n", e.what());
    return 1;
  }
  return 0;
}
