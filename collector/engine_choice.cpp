#include "collector/engine_choice.h"

#include "bpf/sample_counter.h"
#include "collector/bpf_engine.h"
#include "collector/perf_engine.h"

namespace profcollect {

EngineKind parse_engine_kind(const std::string& name) {
  if (name == "perf") return EngineKind::Perf;
  if (name == "bpf") return EngineKind::Bpf;
  if (name == "auto") return EngineKind::Auto;
  throw SettingError("{engine}: unknown engine '" + name + "' (perf, bpf or auto)");
}

namespace {

std::unique_ptr<CollectionEngine> open_perf(const EngineRequest& r, const EventSelection& s) {
  return std::make_unique<PerfEngine>(s, PerfEngineOptions{r.target, r.mmap_pages});
}

std::unique_ptr<CollectionEngine> open_bpf(const EngineRequest& r, const EventSelection& s) {
  BpfEngineOptions o;
  o.target = r.target;
  o.mmap_pages = r.mmap_pages;
  return std::make_unique<BpfEngine>(s, o);
}

}  // namespace

ChosenEngine open_engine(const EngineRequest& request, const EventSelection& selection) {
  ChosenEngine out;
  switch (request.kind) {
    case EngineKind::Perf:
      out.engine = open_perf(request, selection);
      out.name = "perf";
      return out;
    case EngineKind::Bpf:
      if (selection.engine == SamplingEngine::Spe)
        throw SettingError("{engine} bpf: Arm SPE writes its samples into an AUX area, which only "
                           "the perf engine reads; use {engine} perf or auto");
      try {
        out.engine = open_bpf(request, selection);
      } catch (const BpfError& e) {
        throw SettingError(std::string("{engine} bpf: ") + e.what());
      }
      out.name = "bpf";
      out.note = "engine: bpf (samples counted in the kernel)";
      return out;
    case EngineKind::Auto:
      break;
  }
  if (selection.engine == SamplingEngine::Spe) {
    out.engine = open_perf(request, selection);
    out.name = "perf";
    out.note = "engine auto: perf (Arm SPE samples come through an AUX area, which perf reads)";
    return out;
  }
  if (selection.branch_hardware != BranchHardware::None) {
    out.engine = open_perf(request, selection);
    out.name = "perf";
    out.note = "engine auto: perf (the BPF engine counts instruction pointers only; branch stacks need perf)";
    return out;
  }
  try {
    out.engine = open_bpf(request, selection);
    out.name = "bpf";
    out.note = "engine auto: bpf (the kernel loaded the counting program)";
  } catch (const BpfError& e) {
    out.engine = open_perf(request, selection);
    out.name = "perf";
    out.note = std::string("engine auto: perf, because the BPF engine is not available: ") + e.what();
  }
  return out;
}

}  // namespace profcollect
