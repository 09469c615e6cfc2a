// Fuzz target: what the BPF engine does with the contents of a drained count map
// (bpf/sample_counter.h, collector/live/bpf_engine.cpp). A map entry is a struct profcollect_ip_key
// (bpf/sample_counter_abi.h) and a u64 count, read as the kernel left them -- any tgid, any
// address, any count -- and attributed at the interval's end against the address spaces the
// side-band records of the interval built (collector/pipeline/interval_attribution.h). The input is a
// sequence of operations, each a byte choosing one and its fixed-size operands: an MMAP2, an
// exec, a fork or an exit (few pids and addresses, so that they meet), a map entry, or the end
// of an interval. Every count must be either given to the pipeline or counted ambiguous: none
// lost, none counted twice.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "bpf/sample_counter_abi.h"
#include "collector/pipeline/interval_attribution.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace profcollect;

class NoImages : public ImageSelector {
 public:
  ImageChoice choose(uint32_t, const Mapping&, const Dso&) override { return {}; }
};

// The bytes of the input, read front to back; zeros past the end.
class Operands {
 public:
  Operands(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  void read(void* out, size_t n) {
    std::memset(out, 0, n);
    const size_t have = at_ < size_ ? std::min(n, size_ - at_) : 0;
    if (have) std::memcpy(out, data_ + at_, have);
    at_ += n;
  }
  template <typename T>
  T get() {
    T v;
    read(&v, sizeof v);
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

constexpr const char* kFiles[] = {"/usr/bin/a", "/usr/lib/libb.so", "//anon", "[vdso]",
                                  "/tmp/perf-9.map"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  NoImages selector;
  SamplePipeline pipeline(selector, PipelineOptions{});
  IntervalAttribution attribution;
  Operands in(data, size);
  uint64_t time = 1;
  uint64_t added = 0;
  while (!in.done()) {
    const uint8_t op = in.get<uint8_t>();
    const uint32_t pid = in.get<uint8_t>() % 8 + 1;
    ++time;
    switch (op % 6) {
      case 0: {  // MMAP2 of a few pages at a few places
        MmapRecord m;
        m.pid = m.tid = pid;
        m.time = time;
        m.start = uint64_t{in.get<uint8_t>()} << 12;
        m.len = uint64_t{in.get<uint8_t>()} << 12;
        m.pgoff = uint64_t{in.get<uint8_t>()} << 12;
        const uint8_t file = in.get<uint8_t>();
        m.executable = file & 0x80;
        m.filename = kFiles[(file & 0x7f) % std::size(kFiles)];
        m.ino = file & 0x7f;
        m.is_mmap2 = true;
        m.cpumode = CpuMode::User;
        attribution.consume(pipeline, Record{m});
        break;
      }
      case 1: {  // exec
        CommRecord c;
        c.pid = c.tid = pid;
        c.time = time;
        c.exec = true;
        c.comm = "fuzzed";
        attribution.consume(pipeline, Record{c});
        break;
      }
      case 2:
      case 3: {  // fork from another of the pids, or exit
        TaskRecord t;
        t.pid = t.tid = pid;
        t.ppid = t.ptid = in.get<uint8_t>() % 8 + 1;
        t.time = time;
        t.is_exit = op % 6 == 3;
        attribution.consume(pipeline, Record{t});
        break;
      }
      case 4: {  // a drained map entry, as the kernel left it (the tgid of the key, not `pid`)
        const profcollect_ip_key key = in.get<profcollect_ip_key>();
        // A count per interval: far fewer than 2^32 samples, so that the sums cannot wrap.
        const uint64_t count = in.get<uint64_t>() & 0xffffffffu;
        uint32_t tgid = key.tgid;
        uint64_t ip = key.ip;
        // Mostly where the records above mapped something.
        if (op & 0x80) {
          tgid = tgid % 8 + 1;
          ip &= 0x1fffff;
        }
        attribution.add_count(pipeline, tgid, ip, count, time);
        added += count;
        break;
      }
      case 5:
        attribution.end_interval(pipeline);
        break;
    }
  }
  attribution.end_interval(pipeline);
  pipeline.settle();
  const PipelineCounts& c = pipeline.counts();
  if (c.samples + c.excluded + attribution.counts().ambiguous != added) __builtin_trap();
  uint64_t placed = c.no_dso;
  for (const auto& [dso, n] : c.per_dso) placed += n;
  for (const auto& [pid, n] : c.perf_map_per_pid) placed += n;
  if (placed > c.samples) __builtin_trap();
  return 0;
}
