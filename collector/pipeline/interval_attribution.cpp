#include "collector/pipeline/interval_attribution.h"

#include <algorithm>

namespace profcollect {

IntervalAttribution::Changes& IntervalAttribution::changes_of(uint32_t tgid) {
  auto [it, inserted] = changes_.try_emplace(tgid);
  if (inserted || (it->second.spans.empty() && !it->second.reused)) {
    if (std::find(changed_.begin(), changed_.end(), tgid) == changed_.end())
      changed_.push_back(tgid);
  }
  return it->second;
}

void IntervalAttribution::note_replaced(const SamplePipeline& pipeline, uint32_t tgid,
                                        uint64_t start, uint64_t end) {
  scratch_.clear();
  pipeline.processes().overlapping(tgid, start, end, scratch_);
  if (scratch_.empty()) return;
  Changes& c = changes_of(tgid);
  for (const Mapping& m : scratch_) {
    if (m.executable) c.spans.push_back({m.start, m.end, m.dso, m.start - m.pgoff});
  }
}

void IntervalAttribution::consume(SamplePipeline& pipeline, const Record& record) {
  if (const auto* m = std::get_if<MmapRecord>(&record)) {
    const bool user = m->pid != ProcessTable::kKernelPid && m->cpumode != CpuMode::Kernel;
    if (user && m->executable && m->len > 0) {
      note_replaced(pipeline, m->pid, m->start, m->start + m->len);
      pipeline.consume(record);
      if (const Mapping* added = pipeline.processes().find(m->pid, m->start, CpuMode::User)) {
        changes_of(m->pid).spans.push_back(
            {added->start, added->end, added->dso, added->start - added->pgoff});
      }
      return;
    }
  } else if (const auto* c = std::get_if<CommRecord>(&record)) {
    // exec replaces the whole address space (the old image's mappings are gone after it).
    if (c->exec && c->pid == c->tid) note_replaced(pipeline, c->pid, 0, UINT64_MAX);
  } else if (const auto* t = std::get_if<TaskRecord>(&record)) {
    if (t->is_exit) {
      if (t->pid == t->tid) {
        exits_.push_back(*t);
        return;
      }
    } else if (t->pid != t->ppid) {
      // A new process under a pid that ended in this interval: the counts of the two cannot be
      // told apart. The old one's exit goes first, so that the new one starts afresh.
      auto ended = std::find_if(exits_.begin(), exits_.end(),
                                [&](const TaskRecord& e) { return e.pid == t->pid; });
      if (ended != exits_.end()) {
        pipeline.consume(Record{*ended});
        exits_.erase(ended);
        changes_of(t->pid).reused = true;
      }
    }
  }
  pipeline.consume(record);
}

IntervalAttribution::Verdict IntervalAttribution::judge(const SamplePipeline& pipeline,
                                                        uint32_t tgid, uint64_t ip) const {
  auto it = changes_.find(tgid);
  if (it == changes_.end()) return Verdict::Resolve;
  const Changes& c = it->second;
  if (c.reused) return Verdict::Ambiguous;
  const Mapping* now = pipeline.processes().find(tgid, ip, CpuMode::User);
  for (const Span& s : c.spans) {
    if (ip < s.start || ip >= s.end) continue;
    if (!now || s.dso != now->dso || s.base != now->start - now->pgoff) return Verdict::Ambiguous;
  }
  return Verdict::Resolve;
}

void IntervalAttribution::add_count(SamplePipeline& pipeline, uint32_t tgid, uint64_t ip,
                                    uint64_t count, uint64_t time, uint32_t attr_index) {
  SampleRecord s;
  s.pid = s.tid = tgid;
  s.ip = ip;
  s.time = time;
  s.attr_index = attr_index;
  s.period = 1;
  if (is_kernel_address(ip)) {
    s.cpumode = CpuMode::Kernel;
  } else {
    s.cpumode = CpuMode::User;
    if (judge(pipeline, tgid, ip) == Verdict::Ambiguous) {
      counts_.ambiguous += count;
      ++counts_.ambiguous_entries;
      return;
    }
  }
  pipeline.add_sample(s, count);
}

void IntervalAttribution::end_interval(SamplePipeline& pipeline) {
  for (const TaskRecord& e : exits_) pipeline.consume(Record{e});
  exits_.clear();
  for (uint32_t tgid : changed_) {
    auto it = changes_.find(tgid);
    if (it == changes_.end()) continue;
    it->second.spans.clear();
    it->second.reused = false;
  }
  changed_.clear();
  // Entries of processes that changed long ago are kept with their (empty) lists' capacity;
  // bounded by the processes met, trimmed when they outnumber this interval's by far.
  if (changes_.size() > 4096) changes_.clear();
}

}  // namespace profcollect
