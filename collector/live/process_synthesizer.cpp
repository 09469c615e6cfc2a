#include "collector/live/process_synthesizer.h"

#include "collector/host/proc_maps.h"
#include "collector/host/proc_tasks.h"

namespace profcollect {

bool synthesize_process(pid_t pid, const SampleIdLayout& layout, std::vector<uint8_t>& out,
                        SynthesisCount* count) {
  const auto maps = read_proc_maps(pid);
  if (!maps) return false;
  const size_t start = out.size();
  SynthesisCount n;
  for (pid_t tid : list_threads(pid)) {
    // A thread that ends meanwhile has no comm left; it needs none.
    if (auto comm = read_thread_comm(pid, tid)) {
      append_comm_record(out, layout, static_cast<uint32_t>(pid), static_cast<uint32_t>(tid),
                         *comm);
      ++n.threads;
    }
  }
  if (n.threads == 0) {
    out.resize(start);
    return false;
  }
  for (const ProcMapsEntry& m : *maps) {
    if (!m.executable()) continue;
    append_mmap2_record(out, layout, static_cast<uint32_t>(pid), static_cast<uint32_t>(pid), m);
    ++n.mappings;
  }
  if (count) *count = n;
  return true;
}

}  // namespace profcollect
