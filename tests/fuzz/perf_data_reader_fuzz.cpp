// libFuzzer target for the perf.data reader: the input is a whole perf.data (file or pipe mode),
// handed to open_perf_data() through an in-memory file. Every record is read to the end; the
// only acceptable failures are OpenError and SourceError. Built only with
// -DPROFCOLLECT_BUILD_FUZZERS=ON (clang); run e.g.
//   perf_data_reader_fuzz -max_total_time=60 CORPUS_DIR ../shared/testdata/perf-data
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "collector/perf_data_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("perf.data", MFD_CLOEXEC);
  if (fd < 0) return 0;
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) {
      close(fd);
      return 0;
    }
    done += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    auto source = profcollect::open_perf_data(path);
    profcollect::Record record;
    uint64_t checksum = 0;
    while (source->next(record)) {
      // Touch what the records point at, so that ASan sees any view past its buffer.
      if (auto* s = std::get_if<profcollect::SampleRecord>(&record))
        for (const auto& b : s->branches) checksum += b.from ^ b.to ^ b.flags;
      if (auto* m = std::get_if<profcollect::MmapRecord>(&record))
        for (char c : m->filename) checksum += static_cast<unsigned char>(c);
      if (auto* c = std::get_if<profcollect::CommRecord>(&record))
        for (char ch : c->comm) checksum += static_cast<unsigned char>(ch);
    }
    for (const auto& attr : source->session().attrs) checksum += attr.name.size();
    if (source->bytes_read() > source->bytes_total() && source->bytes_total() != 0)
      __builtin_trap();  // progress cannot pass the end
    (void)checksum;
  } catch (const profcollect::OpenError&) {
  } catch (const profcollect::SourceError&) {
  }
  close(fd);
  return 0;
}
