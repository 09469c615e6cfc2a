// Which engine collects: the settings' `engine` (perf, bpf or auto) against what the kernel and
// this process's capabilities allow. perf: the perf_event ring buffers. bpf: samples counted in
// the kernel by a BPF program (collector/live/bpf_engine.h); refused with the reason when the kernel
// or the capabilities do not allow it. auto: bpf where it loads and the event suits it, else
// perf, saying which and why.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "collector/pipeline/collection_engine.h"
#include "collector/pipeline/collection_target.h"
#include "collector/live/event_selection.h"
#include "collector/host/setting_error.h"

namespace profcollect {

enum class EngineKind { Perf, Bpf, Auto };

// "perf", "bpf", "auto"; throws SettingError naming the setting otherwise.
EngineKind parse_engine_kind(const std::string& name);

struct EngineRequest {
  EngineKind kind = EngineKind::Perf;
  CollectionTarget target;
  std::optional<uint64_t> mmap_pages;
  size_t backlog_bytes = kDefaultBacklogBytes;  // the drain backlog's limit
};

struct ChosenEngine {
  std::unique_ptr<CollectionEngine> engine;
  std::string name;  // "perf" or "bpf"
  std::string note;  // which, and why (auto's fallback reason)
};

// Opens the engine. Throws what the engine throws (PerfEventError, EventSelectionError) and, for
// bpf, SettingError with the BPF refusal's reason.
ChosenEngine open_engine(const EngineRequest& request, const EventSelection& selection);

}  // namespace profcollect
