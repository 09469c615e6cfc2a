#include "collector/live/engine_choice.h"

#include "collector/live/perf_engine.h"
#if PROFCOLLECT_WITH_BPF
#include "bpf/sample_counter.h"
#include "collector/live/bpf_engine.h"
#endif

namespace profcollect {

EngineKind parse_engine_kind(const std::string& name) {
  if (name == "perf") return EngineKind::Perf;
  if (name == "bpf") return EngineKind::Bpf;
  if (name == "auto") return EngineKind::Auto;
  throw SettingError("{engine}: unknown engine '" + name + "' (perf, bpf or auto)");
}

namespace {

std::unique_ptr<CollectionEngine> open_perf(const EngineRequest& r, const EventSelection& s) {
  PerfEngineOptions o;
  o.target = r.target;
  o.mmap_pages = r.mmap_pages;
  o.backlog_bytes = r.backlog_bytes;
  return std::make_unique<PerfEngine>(s, o);
}

#if PROFCOLLECT_WITH_BPF
std::unique_ptr<CollectionEngine> open_bpf(const EngineRequest& r, const EventSelection& s) {
  BpfEngineOptions o;
  o.target = r.target;
  o.mmap_pages = r.mmap_pages;
  o.backlog_bytes = r.backlog_bytes;
  return std::make_unique<BpfEngine>(s, o);
}
#else
// A build without BPF support (PROFCOLLECT_WITH_BPF=OFF) has the perf engine only.
struct BpfError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
std::unique_ptr<CollectionEngine> open_bpf(const EngineRequest&, const EventSelection&) {
  throw BpfError("this build of profcollect has no BPF engine");
}
#endif

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
        throw SettingError(
            "{engine} bpf: Arm SPE writes its samples into an AUX area, which only "
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
    out.note =
        "engine auto: perf (the BPF engine counts instruction pointers only; branch stacks need "
        "perf)";
    return out;
  }
  try {
    out.engine = open_bpf(request, selection);
    out.name = "bpf";
    out.note = "engine auto: bpf (the kernel loaded the counting program)";
  } catch (const BpfError& e) {
    out.engine = open_perf(request, selection);
    out.name = "perf";
    out.note =
        std::string("engine auto: perf, because the BPF engine is not available: ") + e.what();
  }
  return out;
}

}  // namespace profcollect
