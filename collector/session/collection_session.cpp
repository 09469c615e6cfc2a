#include "collector/session/collection_session.h"

#include <limits.h>
#include <malloc.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "collector/host/clock_time.h"
#include "collector/host/path_pattern.h"
#include "collector/live/engine_choice.h"
#include "output/profile_store.h"

namespace profcollect {

namespace {

// How long a flush waits for the drain thread's pass over the kernel's buffers.
constexpr long kDrainSyncPatienceMs = 10'000;

std::string realpath_or(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

bool looks_like_build_id(const std::string& s) {
  if (s.size() < 16 || s.size() > 40 || s.size() % 2) return false;
  return s.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

bool names_build_id(const std::string& b) {
  return looks_like_build_id(b) && !std::filesystem::exists(b);
}

// A binary named by path must be a regular file now: that can be known before anything runs.
// (Whether it is ever mapped is known only at the end.)
void check_named_binary(const std::string& b) {
  struct stat st {};
  if (::stat(b.c_str(), &st) != 0) {
    throw SettingError("{binaries}: " + b + ": " + std::strerror(errno) +
                       " (name an existing file or a build-id)");
  }
  if (!S_ISREG(st.st_mode)) throw SettingError("{binaries}: " + b + ": not a regular file");
}

BinarySelection make_selection(const SessionSettings& s) {
  BinarySelection sel;
  for (const auto& b : s.binaries) {
    if (names_build_id(b)) {
      sel.build_ids.push_back(*BuildId::from_hex(b));
    } else {
      check_named_binary(b);
      sel.paths.push_back(realpath_or(b));
      if (sel.paths.back() != b) sel.paths.push_back(b);
    }
  }
  for (const auto& p : s.binary_patterns)
    sel.patterns.push_back(compile_path_pattern(p, std::regex::ECMAScript | std::regex::optimize));
  for (const auto& p : s.exclude_patterns)
    sel.exclude.push_back(compile_path_pattern(p, std::regex::ECMAScript | std::regex::optimize));
  if (!s.binaries.empty() || !s.binary_patterns.empty()) return sel;
  switch (s.target.kind) {
    case TargetKind::SystemWide:
      sel.all = true;
      break;
    case TargetKind::Command:
      sel.paths.push_back(s.command_path);
      break;
    case TargetKind::Processes:
      for (pid_t pid : s.target.pids) {
        char buf[PATH_MAX];
        std::string link = "/proc/" + std::to_string(pid) + "/exe";
        ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1);
        if (n > 0) sel.paths.emplace_back(buf, static_cast<size_t>(n));
      }
      break;
  }
  return sel;
}

}  // namespace

CollectionSession::CollectionSession(SessionSettings settings, SessionLogger& logger,
                                     std::unique_ptr<CollectionEngine> engine)
    : settings_(std::move(settings)), logger_(logger), engine_(std::move(engine)) {
  if (settings_.selection) {
    selection_ = *settings_.selection;
  } else {
    SelectionContext ctx = SelectionContext::of_this_process();
    EventOptions eo;
    eo.event = parse_event_request(settings_.event, settings_.branch_any, settings_.branch_filter);
    eo.frequency_hz = settings_.frequency;
    eo.period = settings_.period;
    selection_ = select_event(eo, ctx);
  }

  store_ = std::make_unique<ProfileStore>(
      settings_.output_dir);  // an unwritable directory fails before anything runs
  if (settings_.selector) {
    selector_ = settings_.selector;
  } else {
    auto mapped = std::make_shared<MappedImageSelector>(make_selection(settings_),
                                                        ImageLoadOptions{settings_.debug_dirs});
    mapped_selector_ = mapped.get();
    selector_ = std::move(mapped);
  }
  std::string engine_note;
  if (!engine_) {
    EngineRequest request;
    request.kind = parse_engine_kind(settings_.engine);
    request.target = settings_.target;
    request.mmap_pages = settings_.mmap_pages;
    request.backlog_bytes = settings_.backlog_bytes;
    ChosenEngine chosen = open_engine(request, selection_);
    engine_ = std::move(chosen.engine);
    engine_name_ = chosen.name;
    engine_note = chosen.note;
  } else {
    engine_name_ = "given";
  }
  PipelineOptions po;
  if (settings_.target.kind == TargetKind::SystemWide)
    po.excluded_pid = static_cast<uint32_t>(::getpid());
  po.kernel_addresses = settings_.kernel_addresses;
  // Arm SPE samples carry one branch each: no ranges between branches to count; their AutoFDO
  // profile comes from the IP samples (as convert makes it of an SPE recording).
  po.branch_ranges = selection_.engine != SamplingEngine::Spe;
  if (auto offset = engine_->time_to_epoch()) {
    po.sample_times = true;
    po.time_to_epoch = *offset;
  }
  pipeline_ = std::make_unique<SamplePipeline>(*selector_, po);
  render_.formats = settings_.formats.empty() ? live_default_formats() : settings_.formats;
  if (settings_.unsymbolized && !render_.wants(format_named("unsymbolized")))
    render_.formats.push_back(format_named("unsymbolized"));
  start_ns_ = clock_ns(CLOCK_REALTIME);

  logger_.note(selection_.engine_note);
  if (!engine_note.empty()) logger_.note(engine_note);
  if (!selection_.kernel_note.empty()) logger_.note(selection_.kernel_note);
  if (!selection_.rate_note.empty()) logger_.note(selection_.rate_note);
  for (const auto& n : engine_->notes()) logger_.note(n);
}

CollectionSession::~CollectionSession() {
  // The thread reads the engine's buffers: it ends first.
  drain_thread_.reset();
}

void CollectionSession::start() {
  engine_->start();
  if (settings_.drain_thread && engine_->collects_live())
    drain_thread_ = std::make_unique<DrainThread>(*engine_, std::chrono::milliseconds(100));
}

std::vector<int> CollectionSession::descriptors() const {
  if (drain_thread_) return {drain_thread_->ready_fd()};
  return engine_->descriptors();
}

bool CollectionSession::targets_alive() const { return engine_->targets_alive(); }

void CollectionSession::drain() {
  if (stopped_) return;
  if (drain_thread_) {
    drain_thread_->clear_ready();
    drain_thread_->rethrow_if_failed();
    engine_->process(*pipeline_);
  } else {
    engine_->drain(*pipeline_);
  }
  for (const std::string& n : engine_->take_notes()) logger_.note(n);
}

SessionStatus CollectionSession::status() const {
  const PipelineCounts& counts = pipeline_->counts();
  SessionStatus st;
  st.event = selection_.name;
  st.engine = engine_name_;
  st.event_choice = selection_.engine_note;
  st.branch_hardware_probed = selection_.probe_note;
  st.by_frequency = selection_.rate.by_frequency;
  st.rate = selection_.rate.value;
  st.samples = counts.samples;
  if (settings_.target.kind == TargetKind::SystemWide) st.own_samples = counts.excluded;
  if (records_branch_stack(selection_.engine)) st.branch_stacks = counts.branch_stacks;
  st.counters = engine_->counters();
  st.mapped = counts.outcomes[SampleOutcome::Mapped];
  for (size_t i = 1; i < kSampleOutcomeCount; ++i) {
    auto o = static_cast<SampleOutcome>(i);
    if (o == SampleOutcome::NoSymbol) continue;  // decided per function when writing
    st.unmapped.emplace_back(std::string(outcome_name(o)), counts.outcomes[o]);
  }
  st.binaries = pipeline_->profiled_slots().size();
  if (!image_warnings_.empty()) {
    nlohmann::ordered_json w = nlohmann::ordered_json::object();
    for (const auto& [kind, group] : image_warnings_) {
      nlohmann::ordered_json listed = nlohmann::ordered_json::array();
      for (const ImageWarning& i : group.listed)
        listed.push_back({{"path", i.path}, {"reason", i.reason}});
      w[kind] = {{"count", group.count}, {"binaries", std::move(listed)}};
    }
    st.image_warnings = std::move(w);
  }
  st.engine_details = nlohmann::ordered_json::object();
  engine_->describe(st.engine_details);
  st.last_flush_symbolization = last_flush_symbolization_;
  st.symbolization = symbolization_;
  st.symbolization.addresses += last_flush_symbolization_.addresses;
  st.symbolization.unit_walks += last_flush_symbolization_.unit_walks;
  st.start_ns = start_ns_;
  st.end_ns = clock_ns(CLOCK_REALTIME);
  return st;
}

nlohmann::ordered_json to_json(const SessionStatus& st) {
  const EngineCounters& c = st.counters;
  nlohmann::ordered_json j;
  j["event"] = st.event;
  j["engine"] = st.engine;
  j["event_choice"] = st.event_choice;
  if (!st.branch_hardware_probed.empty()) j["branch_hardware_probed"] = st.branch_hardware_probed;
  j[st.by_frequency ? "frequency_hz" : "period"] = st.rate;
  j["samples"] = st.samples;
  if (st.own_samples) j["own_samples"] = *st.own_samples;
  if (st.branch_stacks) j["branch_stacks"] = *st.branch_stacks;
  j["lost"] = c.lost_samples;
  j["lost_by_reason"] = {{"ring_buffer", c.lost.ring_buffer},
                         {"kernel_dropped", c.lost.kernel_dropped},
                         {"backlog_full", c.lost.backlog_full},
                         {"bpf_map_full", c.lost.bpf_map_full}};
  j["lost_records"] = c.lost_records;
  if (c.backlog_limit_bytes) {
    j["backlog"] = {{"bytes", c.backlog_bytes},
                    {"peak_bytes", c.backlog_peak_bytes},
                    {"limit_bytes", c.backlog_limit_bytes},
                    {"dropped_records", c.dropped_records}};
  }
  j["resynced_processes"] = c.resynced_processes;
  j["throttled"] = c.throttles;
  j["malformed_records"] = c.malformed;
  j["corrupt_buffers"] = c.corrupt_buffers;
  j["mapped"] = st.mapped;
  j["unmapped"] = nlohmann::ordered_json::object();
  for (const auto& [reason, count] : st.unmapped) j["unmapped"][reason] = count;
  j["binaries"] = st.binaries;
  if (!st.image_warnings.is_null()) j["image_warnings"] = st.image_warnings;
  for (const auto& [key, value] : st.engine_details.items()) j[key] = value;
  j["autofdo_symbolization"] = {{"addresses", st.symbolization.addresses},
                                {"dwarf_unit_walks", st.symbolization.unit_walks},
                                {"last_flush",
                                 {{"addresses", st.last_flush_symbolization.addresses},
                                  {"dwarf_unit_walks", st.last_flush_symbolization.unit_walks}}}};
  j["start_ns"] = st.start_ns;
  j["end_ns"] = st.end_ns;
  return j;
}

std::vector<CollectionSession::BinaryCount> CollectionSession::binary_counts() const {
  std::vector<BinaryCount> out;
  for (int32_t slot : pipeline_->profiled_slots()) {
    const BinaryIdentity& id = pipeline_->image(slot)->identity();
    out.push_back({id.path, id.directory_name(), pipeline_->profile(slot)->samples()});
  }
  return out;
}

namespace {

// What a kind of image warning means, after "N binaries".
std::string_view warning_consequence(const std::string& kind) {
  if (kind == "no_debug_info") return "without debug info: no AutoFDO profile";
  // Short: with "profcollect: warning: ", a count and "; see collection.json", a line stays
  // under 100 characters. The unmapped reasons are named in the summary beside the list.
  if (kind == "no_bolt_blocks") return "without BOLT blocks: bolt.fdata is no_lbr";
  if (kind == "unreadable_binary") return "unreadable: not profiled";
  if (kind == "build_id_mismatch") return "of another build-id: not profiled";
  if (kind == "bolted_without_bat") return "BOLTed without BAT: profiles of the BOLTed layout";
  if (kind == "bat_unreadable") return "with an unreadable BAT: profiled as untranslated";
  return "with a warning";
}

constexpr size_t kMaxListedWarnings = 1000;

}  // namespace

void CollectionSession::gather_image_warnings() {
  std::map<std::string, std::vector<ImageWarning>> fresh;
  for (ImageWarning& w : pipeline_->take_warnings()) fresh[w.kind].push_back(std::move(w));
  for (auto& [kind, warnings] : fresh) {
    WarningGroup& group = image_warnings_[kind];
    group.count += warnings.size();
    const std::string where =
        settings_.summary_file.empty() ? "" : "; see " + settings_.summary_file;
    // One binary is named; many are counted, and listed in the summary.
    if (warnings.size() == 1) {
      logger_.warning(warnings[0].path + ": " + std::string(warning_consequence(kind)) + where);
    } else {
      logger_.warning(std::to_string(warnings.size()) + " binaries " +
                      std::string(warning_consequence(kind)) + where);
    }
    for (ImageWarning& w : warnings) {
      if (group.listed.size() >= kMaxListedWarnings) break;
      group.listed.push_back(std::move(w));
    }
  }
}

void CollectionSession::report_failure(const std::string& what) {
  // Said once: the same failure at every flush of a long run would bury everything else.
  if (std::find(failures_said_.begin(), failures_said_.end(), what) != failures_said_.end()) return;
  if (failures_said_.size() < 1000) failures_said_.push_back(what);
  logger_.error("flush failed: " + what +
                (stopped_ ? "" : " (the profiles in memory are kept; retrying at the next flush)"));
}

const FlushReport& CollectionSession::flush_until(
    std::optional<std::chrono::steady_clock::time_point> deadline) {
  const auto began = std::chrono::steady_clock::now();
  FlushReport report;
  symbolization_.addresses += last_flush_symbolization_.addresses;
  symbolization_.unit_walks += last_flush_symbolization_.unit_walks;
  last_flush_symbolization_ = {};
  report.unix_ns = clock_ns(CLOCK_REALTIME);
  // What the kernel held when the flush began is in it: the drain thread reads the buffers once
  // more (it is quick: a pass only copies) and the session takes it in.
  // A pass takes milliseconds, but on a loaded host the thread may wait for a CPU: the patience
  // is generous (or what the deadline leaves), and a flush that got no pass says so.
  if (drain_thread_ && !stopped_) {
    auto patience = std::chrono::milliseconds(kDrainSyncPatienceMs);
    if (deadline) {
      patience = std::min(
          patience,
          std::max(std::chrono::milliseconds(0),
                   std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - began)));
    }
    // A record is stamped and written in one interrupt, without a pause: whatever is stamped
    // before the flush began is in the buffers when the pass that follows reads them.
    const uint64_t began_ns = clock_ns(CLOCK_MONOTONIC);
    if (!drain_thread_->sync(patience, flush_progress_)) {
      logger_.warning("flush: the drain thread did not complete a pass within " +
                      std::to_string(patience.count()) +
                      " ms; this flush has what it had taken in before");
    }
    drain();
    if (!stopped_) engine_->settle(*pipeline_, began_ns);
  }
  // The flush's time is up: its deadline passed, or its owner interrupts it.
  const RenderStop stop{[&] {
    return (deadline && std::chrono::steady_clock::now() >= *deadline) ||
           (flush_interrupt_ && flush_interrupt_());
  }};
  auto fail = [&](std::string binary, std::string directory, const std::string& reason) {
    report.ok = false;
    report_failure(reason);
    report.failures.push_back({std::move(binary), std::move(directory), reason});
  };
  try {
    // The events that gave samples, as convert names them in a BOLT profile's header.
    std::vector<std::string> events;
    const std::vector<std::string> names = engine_->event_names();
    const std::vector<uint64_t>& per_attr = pipeline_->counts().per_attr;
    for (size_t i = 0; i < per_attr.size() && i < names.size(); ++i) {
      if (per_attr[i]) events.push_back(names[i]);
    }
    if (events.empty()) events.push_back(selection_.name);
    const bool events_changed = events != written_events_;
    for (int32_t slot : pipeline_->profiled_slots()) {
      const ImageProfile& profile = *pipeline_->profile(slot);
      if (profile.samples() == 0 && !profile.has_branch_stacks()) continue;
      LoadedImage& image = *pipeline_->image(slot);
      const std::string directory = image.identity().directory_name();
      auto written = written_.find(directory);
      if (!events_changed && written != written_.end() && written->second == profile.revision())
        continue;
      if (report.cut_short || stop.requested()) {
        report.cut_short = true;
        ++report.pending;
        continue;
      }
      if (flush_progress_) flush_progress_();
      BinaryProfileSnapshot s;
      s.identity = image.identity();
      s.counts = profile.counts(events);
      s.samples = profile.samples();
      s.first_sample_ns = profile.first_ns();
      s.last_sample_ns = profile.last_ns();
      s.event = events.front();
      s.events = events;
      s.render = [&](const ImageCounts& counts) {
        return render_profiles(image, counts, render_, &stop);
      };
      // One binary that cannot be written (a full disk, an entry planted under its name) does
      // not keep the others from being tried.
      report.touched.push_back(directory);
      try {
        store_->write_binary(s);
        written_[directory] = profile.revision();
        ++report.written;
      } catch (const RenderStopped&) {
        report.cut_short = true;  // its directory is as the last flush left it
        ++report.pending;
      } catch (const std::exception& e) {
        fail(image.identity().path, directory, e.what());
      }
      // What rendering decoded (instructions, DWARF units, line tables) grows with every
      // address the image's profile ever held; kept between flushes it would make a long-lived
      // image's memory grow all run long. The next flush decodes again what it needs, but for
      // the inline stacks already found (bounded).
      image.drop_caches();
      const DwarfSymbolizer::Counts cost = image.take_symbolization_counts();
      last_flush_symbolization_.addresses += cost.addresses;
      last_flush_symbolization_.unit_walks += cost.unit_walks;
    }
    // Cut short, the events the files name are not all this run's: the next flush writes all.
    written_events_ = report.cut_short ? std::vector<std::string>{} : events;
    gather_image_warnings();
    if (!settings_.summary_file.empty()) {
      report.touched.push_back(settings_.summary_file);
      try {
        store_->write_collection(settings_.summary_file, status_json());
      } catch (const std::exception& e) {
        fail("", settings_.summary_file, e.what());
      }
    }
    // Everything is on disk: images no process maps any more are released (a long run's state
    // stays bounded); their counts are read back from their directory if they come back. After
    // a failed or cut-short write nothing is released: those counts exist only in memory.
    if (report.ok && !report.cut_short) {
      const std::vector<BinaryIdentity> released = pipeline_->release_unmapped();
      for (const BinaryIdentity& id : released) {
        store_->forget(id.directory_name());
        written_.erase(id.directory_name());
      }
    }
    // Images and what rendering decoded are many small allocations made and freed together;
    // give the freed pages back, or the run keeps the high-water mark of every interval.
    malloc_trim(0);
  } catch (const std::exception& e) {
    // Keep everything in memory: the next flush writes it all.
    fail("", "", e.what());
  }
  for (const auto& w : store_->take_warnings()) logger_.warning(w);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  last_flush_ = std::move(report);
  return *last_flush_;
}

bool CollectionSession::drop_binary(const std::string& directory) {
  bool dropped = false;
  for (int32_t slot : pipeline_->profiled_slots()) {
    if (pipeline_->image(slot)->identity().directory_name() != directory) continue;
    pipeline_->drop_profile(slot);
    dropped = true;
  }
  store_->forget(directory);
  written_.erase(directory);
  return dropped;
}

bool CollectionSession::stop(std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (stopped_) return true;
  stopped_ = true;
  if (drain_thread_) {
    drain_thread_->stop();
    drain_thread_.reset();
  }
  engine_->finish(*pipeline_);
  // Counted before the final flush releases the images no process maps any more.
  const size_t profiled = pipeline_->profiled_slots().size();
  const FlushReport& flushed = flush_until(deadline);
  for (const std::string& b : settings_.binaries) {
    if (!mapped_selector_) break;
    const bool matched =
        names_build_id(b)
            ? mapped_selector_->matched_build_id(*BuildId::from_hex(b))
            : mapped_selector_->matched_path(realpath_or(b)) || mapped_selector_->matched_path(b);
    if (!matched)
      logger_.warning("{binaries} " + b +
                      " was not mapped by any profiled process: no profile for it");
  }
  const EngineCounters c = engine_->counters();
  const PipelineCounts& counts = pipeline_->counts();
  std::string summary = std::to_string(counts.samples) + " samples, " +
                        std::to_string(counts.outcomes[SampleOutcome::Mapped]) + " in " +
                        std::to_string(profiled) +
                        (profiled == 1 ? " profiled binary, " : " profiled binaries, ") +
                        std::to_string(c.lost_samples) + " lost";
  if (flushed.ok && !flushed.cut_short) summary += "; profiles in " + settings_.output_dir;
  if (settings_.summary_line) logger_.note(summary);
  if (flushed.cut_short) {
    char took[32];
    std::snprintf(took, sizeof took, "%.1f", flushed.seconds);
    logger_.error("final flush cut short after " + std::string(took) +
                  " s: " + std::to_string(flushed.written) + " binaries written, " +
                  std::to_string(flushed.pending) + " keep their last flush");
  }
  if (c.lost_samples > 0) {
    const uint64_t total = counts.samples + c.lost_samples;
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%",
                  100.0 * static_cast<double>(c.lost_samples) / static_cast<double>(total));
    std::string reasons;
    const std::pair<const char*, uint64_t> by_reason[] = {{"ring_buffer", c.lost.ring_buffer},
                                                          {"kernel_dropped", c.lost.kernel_dropped},
                                                          {"backlog_full", c.lost.backlog_full},
                                                          {"bpf_map_full", c.lost.bpf_map_full}};
    for (const auto& [reason, n] : by_reason) {
      if (n) reasons += std::string(reasons.empty() ? "" : ", ") + reason + " " + std::to_string(n);
    }
    // The remedy depends on where they were lost.
    const char* remedy = c.lost.ring_buffer    ? ": raise {mmap_pages} or lower {frequency}"
                         : c.lost.backlog_full ? ": raise {backlog_mb}"
                                               : "";
    logger_.warning(std::to_string(c.lost_samples) + " samples (" + share + ") lost (" + reasons +
                    ")" + remedy);
  }
  return flushed.ok && !flushed.cut_short;
}

}  // namespace profcollect
