#include "collector/pipeline/sample_pipeline.h"

#include "mapper/image_kind.h"

#include <algorithm>

namespace profcollect {

SamplePipeline::SamplePipeline(ImageSelector& selector, PipelineOptions options)
    : selector_(selector), options_(std::move(options)), resolver_(selector) {}

const ImageProfile* SamplePipeline::profile(int32_t slot) const {
  return slot >= 0 && static_cast<size_t>(slot) < profiles_.size() ? profiles_[slot].get()
                                                                   : nullptr;
}

std::vector<int32_t> SamplePipeline::profiled_slots() const {
  std::vector<int32_t> out;
  for (size_t i = 0; i < profiles_.size(); ++i) {
    if (profiles_[i] && resolver_.image(static_cast<int32_t>(i)) &&
        !resolver_.provisional(static_cast<int32_t>(i))) {
      out.push_back(static_cast<int32_t>(i));
    }
  }
  return out;
}

ImageProfile& SamplePipeline::profile_for(int32_t slot) {
  if (static_cast<size_t>(slot) >= profiles_.size()) profiles_.resize(slot + 1);
  if (!profiles_[slot]) {
    profiles_[slot] = std::make_unique<ImageProfile>(*resolver_.image(slot), options_.branch_ranges,
                                                     options_.bolt_branches);
  }
  return *profiles_[slot];
}

void SamplePipeline::consume(const Record& record, uint64_t count) {
  if (const auto* s = std::get_if<SampleRecord>(&record)) {
    add_sample(*s, count);
  } else if (const auto* l = std::get_if<LostRecord>(&record)) {
    counts_.lost += l->lost;
  } else if (const auto* t = std::get_if<ThrottleRecord>(&record)) {
    if (!t->unthrottle) ++counts_.throttled;
  } else if (!of_hidden_process(record)) {
    processes_.update(record);
  }
}

// The kernel writes the records of a task outside the reader's pid namespace with pid 0 (its
// pid there): merged into one address space they would only misattribute each other's samples.
// The idle task, pid 0 in every namespace, maps nothing; the kernel's own mappings are pid -1.
bool SamplePipeline::of_hidden_process(const Record& r) {
  if (const auto* m = std::get_if<MmapRecord>(&r)) return m->pid == 0;
  if (const auto* c = std::get_if<CommRecord>(&r)) return c->pid == 0;
  if (const auto* t = std::get_if<TaskRecord>(&r)) return t->pid == 0;
  return false;
}

// Only executable memory takes perf's /tmp/perf-PID.map name (a sample rarely lands elsewhere,
// so the mapping is looked up again only then).
bool SamplePipeline::in_executable_mapping(const SampleRecord& s) const {
  const Mapping* m = processes_.find(s.pid, s.ip, s.cpumode);
  return m != nullptr && m->executable;
}

void SamplePipeline::add_sample(const SampleRecord& s, uint64_t count) {
  if (options_.pid && s.pid != *options_.pid) return;
  if (options_.excluded_pid && s.pid == *options_.excluded_pid) {
    counts_.excluded += count;
    return;
  }
  counts_.samples += count;
  if (counts_.per_attr.size() <= s.attr_index) counts_.per_attr.resize(s.attr_index + 1);
  counts_.per_attr[s.attr_index] += count;
  if (s.pid == 0 && s.cpumode == CpuMode::User) {
    // Outside this pid namespace (see of_hidden_process): in no address space known here.
    counts_.no_dso += count;
    counts_.outcomes.add(SampleOutcome::OtherPidNamespace, count);
    return;
  }
  const ResolvedAddress r = resolver_.resolve(processes_, s.pid, s.ip, s.cpumode);
  if (r.dso != ResolvedAddress::kNoDso) {
    if (is_perf_map_memory(processes_.dso(r.dso).path) && in_executable_mapping(s)) {
      counts_.perf_map_per_pid[s.pid] += count;
    } else {
      counts_.per_dso[r.dso] += count;
    }
  } else {
    counts_.no_dso += count;
  }
  counts_.outcomes.add(r.outcome, count);
  if (r.outcome == SampleOutcome::Mapped) {
    const uint64_t t =
        options_.sample_times && s.time != kNoTime
            ? static_cast<uint64_t>(static_cast<int64_t>(s.time) + options_.time_to_epoch)
            : 0;
    profile_for(r.image).add_ip(r.vaddr, count, t);
  } else if (r.outcome == SampleOutcome::Kernel && options_.kernel_addresses) {
    kernel_addresses_[s.ip] += count;
  }
  if (s.has_branch_stack) {
    counts_.branch_stacks += count;
    if (options_.branch_stacks && !s.branches.empty())
      add_branch_stack(s.pid, s.cpumode, s.branches, count);
  }
}

// A user sample's branch ends are resolved as user addresses: a kernel end lies in no user
// mapping, so kernel entries are kept out of user profiles as external ends. A kernel sample's
// (perf record -b with :k) are kernel code, looked up in the kernel's mappings first; an end
// the kernel does not map (a system call's user-mode source) is looked up in the process's.
ResolvedAddress SamplePipeline::resolve_branch_end(uint32_t pid, uint64_t address,
                                                   CpuMode sample_mode) {
  const bool kernel = sample_mode == CpuMode::Kernel || sample_mode == CpuMode::GuestKernel;
  if (!kernel) return resolver_.resolve(processes_, pid, address, CpuMode::User, memo_);
  const ResolvedAddress r = resolver_.resolve(processes_, pid, address, sample_mode, memo_);
  if (r.dso != ResolvedAddress::kNoDso) return r;
  return resolver_.resolve(processes_, pid, address, CpuMode::User, memo_);
}

void SamplePipeline::add_branch_stack(uint32_t pid, CpuMode mode,
                                      std::span<const BranchEntry> newest_first, uint64_t count) {
  const size_t n = newest_first.size();
  from_.resize(n);
  to_.resize(n);
  touched_.clear();
  memo_.clear();  // the records before this sample may have changed what an address is
  int32_t last_touched = -1;
  for (size_t i = 0; i < n; ++i) {
    from_[i] = stack_end(pid, newest_first[i].from, mode);
    to_[i] = stack_end(pid, newest_first[i].to, mode);
    for (int32_t slot : {from_[i].image, to_[i].image}) {
      if (slot < 0 || slot == last_touched) continue;
      last_touched = slot;
      if (std::find(touched_.begin(), touched_.end(), slot) == touched_.end())
        touched_.push_back(slot);
    }
  }
  // Each image touched sees the stack in its own terms; only the counts the options ask for are
  // made (ImageProfile counts those alone).
  const size_t bolt_n = options_.bolt_branches ? n : 0;
  const size_t ranges_n = options_.branch_ranges ? n : 0;
  bolt_stack_.resize(bolt_n);
  range_stack_.resize(ranges_n);
  for (int32_t slot : touched_) {
    for (size_t i = 0; i < bolt_n; ++i) {
      BranchStackEntry& bolt = bolt_stack_[i];
      bolt.from_inside = from_[i].image == slot;
      bolt.to_inside = to_[i].image == slot;
      // perf2bolt writes every end outside the binary as address 0 ("0 [unknown] 0").
      bolt.from = bolt.from_inside ? from_[i].vaddr : 0;
      bolt.to = bolt.to_inside ? to_[i].vaddr : 0;
      bolt.mispredicted = newest_first[i].mispredicted();
    }
    for (size_t i = 0; i < ranges_n; ++i) {
      range_stack_[i].source = from_[i].image == slot ? from_[i].vaddr : kExternalAddress;
      range_stack_[i].target = to_[i].image == slot ? to_[i].vaddr : kExternalAddress;
    }
    profile_for(slot).add_branch_stack(bolt_stack_, range_stack_, count);
  }
}

void SamplePipeline::drop_profile(int32_t slot) {
  if (slot >= 0 && static_cast<size_t>(slot) < profiles_.size()) profiles_[slot].reset();
}

std::vector<BinaryIdentity> SamplePipeline::release_unmapped() {
  const std::vector<uint32_t> dsos = processes_.release_unmapped();
  for (uint32_t d : dsos) counts_.per_dso.erase(d);
  std::vector<BinaryIdentity> released;
  // Identities first: forget() drops the images.
  std::vector<std::pair<int32_t, BinaryIdentity>> before;
  for (size_t i = 0; i < resolver_.slot_count(); ++i) {
    if (LoadedImage* image = resolver_.image(static_cast<int32_t>(i)))
      before.emplace_back(static_cast<int32_t>(i), image->identity());
  }
  for (int32_t slot : resolver_.forget(dsos)) {
    if (static_cast<size_t>(slot) < profiles_.size()) profiles_[slot].reset();
    for (const auto& [s, id] : before) {
      if (s == slot) released.push_back(id);
    }
  }
  return released;
}

void SamplePipeline::settle() {
  selector_.settle();
  for (const ImageRevision& rev : resolver_.reconsider(processes_)) {
    std::unique_ptr<ImageProfile> moved;
    if (static_cast<size_t>(rev.slot) < profiles_.size()) moved = std::move(profiles_[rev.slot]);
    if (!moved) continue;
    if (rev.into >= 0) {
      profile_for(rev.into).merge(*moved);
    } else {
      // The samples were counted as mapped before their file turned out not to be the binary.
      counts_.outcomes.counts[static_cast<size_t>(SampleOutcome::Mapped)] -= moved->samples();
      counts_.outcomes.add(rev.outcome, moved->samples());
    }
  }
}

}  // namespace profcollect
