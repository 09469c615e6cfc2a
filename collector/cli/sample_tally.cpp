#include "collector/cli/sample_tally.h"

#include <chrono>

#include "mapper/sample_resolver.h"

namespace profcollect {

BinaryMatcher::BuildIdLookup recorded_build_ids(const RecordSource& source) {
  return [&source](std::string_view path) -> const BuildId* {
    for (const auto& e : source.session().build_ids) {
      if (e.filename == path) return &e.build_id;
    }
    return nullptr;
  };
}

std::string dso_display_name(const Dso& dso) {
  std::string_view p = dso.path;
  if (dso.kernel) {
    if (p.starts_with("[kernel.kallsyms]")) return "[kernel.kallsyms]";
    if (p.starts_with("[")) return std::string(p);
    // A module: perf shows "[name]" with '-' as '_' and no .ko suffix.
    auto slash = p.rfind('/');
    std::string name(slash == std::string_view::npos ? p : p.substr(slash + 1));
    auto dot = name.find(".ko");
    if (dot != std::string::npos) name.resize(dot);
    for (auto& c : name)
      if (c == '-') c = '_';
    return "[" + name + "]";
  }
  return std::string(p);
}

void tally_samples(RecordSource& source, ProcessTable& processes, const TallyOptions& options,
                   const std::optional<TallyTarget>& target, SampleTally& tally) {
  std::optional<SampleResolver> resolver;
  if (target) resolver.emplace(processes, *target->matcher, *target->segments);

  Record record;
  std::vector<BranchEnds> stack;  // reused: no allocation per sample once it has grown
  stack.reserve(64);
  std::vector<BranchStackEntry> bolt_stack;
  bolt_stack.reserve(64);
  uint64_t n = 0;
  auto last_progress = std::chrono::steady_clock::now();
  while (source.next(record)) {
    if (options.progress && (++n & 0xffff) == 0) {
      auto now = std::chrono::steady_clock::now();
      if (now - last_progress > std::chrono::milliseconds(500)) {
        last_progress = now;
        options.progress(source.bytes_read(), source.bytes_total());
      }
    }
    if (auto* s = std::get_if<SampleRecord>(&record)) {
      if (options.pid && s->pid != *options.pid) continue;
      ++tally.samples;
      if (tally.per_attr.size() <= s->attr_index) tally.per_attr.resize(s->attr_index + 1);
      ++tally.per_attr[s->attr_index];
      if (const Mapping* m = processes.find(s->pid, s->ip, s->cpumode)) {
        ++tally.per_dso[m->dso];
      } else {
        ++tally.no_dso;
      }
      if (resolver) {
        ResolvedAddress r = resolver->resolve(s->pid, s->ip, s->cpumode);
        tally.outcomes.add(r.outcome);
        if (r.outcome == SampleOutcome::Mapped) tally.target_ips.add(r.vaddr);
        if ((target->branches || target->bolt_branches) && s->has_branch_stack && !s->branches.empty()) {
          // Kernel entries are kept out of user profiles: they resolve as external.
          stack.clear();
          bolt_stack.clear();
          for (const BranchEntry& e : s->branches) {
            BranchEnds ends;
            BranchStackEntry bolt;
            ResolvedAddress from = resolver->resolve(s->pid, e.from, CpuMode::User);
            ResolvedAddress to = resolver->resolve(s->pid, e.to, CpuMode::User);
            bolt.from_inside = from.outcome == SampleOutcome::Mapped;
            bolt.to_inside = to.outcome == SampleOutcome::Mapped;
            // perf2bolt 19 writes every end outside the binary as address 0 ("0 [unknown] 0").
            bolt.from = bolt.from_inside ? from.vaddr : 0;
            bolt.to = bolt.to_inside ? to.vaddr : 0;
            bolt.mispredicted = e.mispredicted();
            if (bolt.from_inside) ends.source = from.vaddr;
            if (bolt.to_inside) ends.target = to.vaddr;
            stack.push_back(ends);
            bolt_stack.push_back(bolt);
          }
          if (target->branches) target->branches->add(stack);
          if (target->bolt_branches) target->bolt_branches->add_stack(bolt_stack);
        }
      }
    } else if (auto* l = std::get_if<LostRecord>(&record)) {
      tally.lost += l->lost;
    } else if (auto* t = std::get_if<ThrottleRecord>(&record)) {
      if (!t->unthrottle) ++tally.throttled;
    } else {
      processes.update(record);
    }
  }
  if (options.progress) options.progress(source.bytes_read(), source.bytes_total());
}

}  // namespace profcollect
