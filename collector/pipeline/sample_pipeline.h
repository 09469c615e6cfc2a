// The one pipeline every source and engine feeds: records -> process table -> image resolver
// (address -> image, address in the image, outcome) -> one profile per image (weighted IP
// samples and branch stacks). convert and report feed it a recording; live collection feeds it
// its ring buffers; the daemon and kernel mode will feed it the same way. The profiles are
// rendered by output/profile_renderer.h, directly (convert) or through the profile store.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mapper/image_resolver.h"
#include "mapper/process_table.h"
#include "output/image_profile.h"
#include "record/record.h"
#include "record/sample_outcome.h"

namespace profcollect {

struct PipelineOptions {
  std::optional<uint32_t> pid;  // only this process's samples
  // A process whose samples are counted apart (PipelineCounts::excluded) and go nowhere else:
  // the collector's own, in a system-wide collection. Profiling itself would make each flush
  // render the collector's own (large) debug info, whose samples the rendering adds to.
  std::optional<uint32_t> excluded_pid;
  // Take branch stacks; count them as BOLT counts them (taken branches and fall-throughs), and
  // as llvm-profgen's ranges. A conversion counts only what its formats are made from.
  bool branch_stacks = true;
  bool bolt_branches = true;
  bool branch_ranges = true;
  // Sample times are kept per image (first and last sample) as time + time_to_epoch, Unix-epoch
  // nanoseconds; off when the source's clock has no known relation to the wall clock.
  bool sample_times = false;
  int64_t time_to_epoch = 0;
  // Keep the runtime address of every sample in the kernel or a module that no image took (no
  // vmlinux or .ko to translate into), for a profile made from the running kernel's symbols.
  bool kernel_addresses = false;
};

struct PipelineCounts {
  uint64_t samples = 0;        // samples taken in (after the pid filter), weighted
  uint64_t excluded = 0;       // samples of PipelineOptions::excluded_pid, not in `samples`
  uint64_t branch_stacks = 0;  // of which carried a branch stack
  uint64_t lost = 0;           // PERF_RECORD_LOST and LOST_SAMPLES
  uint64_t throttled = 0;
  std::vector<uint64_t> per_attr;                  // samples per attr (event) index
  std::unordered_map<uint32_t, uint64_t> per_dso;  // samples per mapped file (Dso index)
  // Samples in executable anonymous memory (mapper/image_kind.h is_perf_map_memory) per
  // process, counted here instead of in per_dso: perf names that memory /tmp/perf-PID.map.
  std::unordered_map<uint32_t, uint64_t> perf_map_per_pid;
  uint64_t no_dso = 0;  // samples in no mapping
  OutcomeCounts outcomes;
};

class SamplePipeline {
 public:
  SamplePipeline(ImageSelector& selector, PipelineOptions options);

  // One record: a sample is resolved and counted `count` times; the others update the process
  // table and the loss counters.
  void consume(const Record& record, uint64_t count = 1);
  void add_sample(const SampleRecord& sample, uint64_t count = 1);

  // The input is complete (every build-id it will give is known): provisional decisions are
  // confirmed, folded into their image or rejected.
  void settle();

  ProcessTable& processes() { return processes_; }
  const ProcessTable& processes() const { return processes_; }
  const PipelineCounts& counts() const { return counts_; }

  // Image slots (ImageResolver): the image and its profile; null for a released slot or one
  // without samples.
  size_t slot_count() const { return resolver_.slot_count(); }
  LoadedImage* image(int32_t slot) const { return resolver_.image(slot); }
  const ImageProfile* profile(int32_t slot) const;
  // Images with a profile (not provisional), in the order they were met.
  std::vector<int32_t> profiled_slots() const;

  std::vector<ImageWarning> take_warnings() { return resolver_.take_warnings(); }

  // Samples per runtime address in the kernel or its modules that no image took
  // (PipelineOptions::kernel_addresses).
  const std::unordered_map<uint64_t, uint64_t>& kernel_addresses() const {
    return kernel_addresses_;
  }

  // Forgets the counts of the image in `slot` (the image stays resolved): its next sample starts
  // a new profile.
  void drop_profile(int32_t slot);

  // Releases what no live process maps any more: the process table's files, the resolver's
  // decisions and images, and those images' profiles -- call it only once they are flushed.
  // Returns the identities of the released images.
  std::vector<BinaryIdentity> release_unmapped();

 private:
  static bool of_hidden_process(const Record& r);
  ImageProfile& profile_for(int32_t slot);
  void add_branch_stack(uint32_t pid, CpuMode mode, std::span<const BranchEntry> newest_first,
                        uint64_t count);
  bool in_executable_mapping(const SampleRecord& s) const;
  struct StackEnd {
    uint64_t vaddr = 0;  // in the image, when there is one
    int32_t image = -1;  // its slot; -1 outside every image
  };
  ResolvedAddress resolve_branch_end(uint32_t pid, uint64_t address, CpuMode sample_mode);
  // The same for a stack's end, answered from the sample's memo when it can be (inline: a
  // branch stack has 64 ends).
  StackEnd stack_end(uint32_t pid, uint64_t address, CpuMode sample_mode) {
    const bool kernel = sample_mode == CpuMode::Kernel || sample_mode == CpuMode::GuestKernel;
    // The memo holds runs of mappings only: an address it knows in the kernel's is the kernel's.
    if (const ResolveMemo::Entry* e =
            memo_.find(pid, address, kernel ? sample_mode : CpuMode::User)) {
      return StackEnd{address + e->run.delta, e->result.image};
    }
    const ResolvedAddress r = resolve_branch_end(pid, address, sample_mode);
    return StackEnd{r.vaddr, r.image};
  }

  ImageSelector& selector_;
  PipelineOptions options_;
  ProcessTable processes_;
  ImageResolver resolver_;
  std::vector<std::unique_ptr<ImageProfile>> profiles_;  // per slot
  PipelineCounts counts_;
  std::unordered_map<uint64_t, uint64_t> kernel_addresses_;
  // Scratch for branch stacks, reused so that a sample allocates nothing.
  std::vector<StackEnd> from_, to_;
  std::vector<int32_t> touched_;
  ResolveMemo memo_;  // one sample's branch ends, as they resolve (cleared per sample)
  std::vector<BranchStackEntry> bolt_stack_;
  std::vector<BranchEnds> range_stack_;
};

}  // namespace profcollect
