#include "collector/collection_session.h"

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

#include "collector/clock_time.h"
#include "collector/engine_choice.h"
#include "output/fdata_writer.h"
#include "output/function_profile.h"
#include "output/profile_store.h"

namespace profcollect {

namespace {

std::string realpath_or(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

bool looks_like_build_id(const std::string& s) {
  if (s.size() < 16 || s.size() > 40 || s.size() % 2) return false;
  return s.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

bool names_build_id(const std::string& b) { return looks_like_build_id(b) && !std::filesystem::exists(b); }

// A binary named by path must be a regular file now: that can be known before anything runs.
// (Whether it is ever mapped is known only at the end.)
void check_named_binary(const std::string& b) {
  struct stat st {};
  if (::stat(b.c_str(), &st) != 0) {
    throw SettingError("{binaries}: " + b + ": " + std::strerror(errno) + " (name an existing file or a build-id)");
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
  for (const auto& p : s.binary_patterns) sel.patterns.emplace_back(p, std::regex::ECMAScript | std::regex::optimize);
  for (const auto& p : s.exclude_patterns) sel.exclude.emplace_back(p, std::regex::ECMAScript | std::regex::optimize);
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

  store_ = std::make_unique<ProfileStore>(settings_.output_dir);  // an unwritable directory fails before anything runs
  if (settings_.selector) {
    selector_ = settings_.selector;
  } else {
    auto mapped = std::make_shared<MappedImageSelector>(make_selection(settings_), ImageLoadOptions{settings_.debug_dirs});
    mapped_selector_ = mapped.get();
    selector_ = std::move(mapped);
  }
  std::string engine_note;
  if (!engine_) {
    ChosenEngine chosen = open_engine(
        EngineRequest{parse_engine_kind(settings_.engine), settings_.target, settings_.mmap_pages}, selection_);
    engine_ = std::move(chosen.engine);
    engine_name_ = chosen.name;
    engine_note = chosen.note;
  } else {
    engine_name_ = "given";
  }
  PipelineOptions po;
  if (settings_.target.kind == TargetKind::SystemWide) po.excluded_pid = static_cast<uint32_t>(::getpid());
  po.kernel_addresses = settings_.kernel_addresses;
  // Arm SPE samples carry one branch each: no ranges between branches to count; their AutoFDO
  // profile comes from the IP samples (as convert makes it of an SPE recording).
  po.branch_ranges = selection_.engine != SamplingEngine::Spe;
  if (auto offset = engine_->time_to_epoch()) {
    po.sample_times = true;
    po.time_to_epoch = *offset;
  }
  pipeline_ = std::make_unique<SamplePipeline>(*selector_, po);
  render_.formats = {ProfileFormat::Bolt, ProfileFormat::Preagg, ProfileFormat::Autofdo};
  if (settings_.unsymbolized) render_.formats.push_back(ProfileFormat::Unsymbolized);
  if (!settings_.formats.empty()) render_.formats = settings_.formats;
  start_ns_ = clock_ns(CLOCK_REALTIME);

  logger_.note(selection_.engine_note);
  if (!engine_note.empty()) logger_.note(engine_note);
  if (!selection_.kernel_note.empty()) logger_.note(selection_.kernel_note);
  if (!selection_.rate_note.empty()) logger_.note(selection_.rate_note);
  for (const auto& n : engine_->notes()) logger_.note(n);
}

CollectionSession::~CollectionSession() = default;

void CollectionSession::start() { engine_->start(); }

std::vector<int> CollectionSession::descriptors() const { return engine_->descriptors(); }

bool CollectionSession::targets_alive() const { return engine_->targets_alive(); }

void CollectionSession::drain() {
  if (!stopped_) engine_->drain(*pipeline_);
}

nlohmann::ordered_json CollectionSession::status() const {
  const EngineCounters c = engine_->counters();
  const PipelineCounts& counts = pipeline_->counts();
  nlohmann::ordered_json j;
  j["event"] = selection_.name;
  j["engine"] = engine_name_;
  if (selection_.rate.by_frequency) {
    j["frequency_hz"] = selection_.rate.value;
  } else {
    j["period"] = selection_.rate.value;
  }
  j["samples"] = counts.samples;
  if (settings_.target.kind == TargetKind::SystemWide) j["own_samples"] = counts.excluded;
  if (records_branch_stack(selection_.engine)) j["branch_stacks"] = counts.branch_stacks;
  j["lost"] = c.lost_samples;
  j["lost_records"] = c.lost_records;
  j["throttled"] = c.throttles;
  j["malformed_records"] = c.malformed;
  j["corrupt_buffers"] = c.corrupt_buffers;
  j["mapped"] = counts.outcomes[SampleOutcome::Mapped];
  nlohmann::ordered_json unmapped = nlohmann::ordered_json::object();
  for (size_t i = 1; i < kSampleOutcomeCount; ++i) {
    auto o = static_cast<SampleOutcome>(i);
    if (o == SampleOutcome::NoSymbol) continue;  // decided per function when writing
    unmapped[std::string(outcome_name(o))] = counts.outcomes[o];
  }
  j["unmapped"] = unmapped;
  j["binaries"] = pipeline_->profiled_slots().size();
  engine_->describe(j);
  j["start_ns"] = start_ns_;
  j["end_ns"] = clock_ns(CLOCK_REALTIME);
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

void CollectionSession::absorb_if_due(std::chrono::steady_clock::time_point& last) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last < settings_.absorb_interval) return;
  engine_->absorb();
  if (flush_progress_) flush_progress_();
  last = std::chrono::steady_clock::now();
}

void CollectionSession::report_failure(const std::string& what) {
  // Said once: the same failure at every flush of a long run would bury everything else.
  if (std::find(failures_said_.begin(), failures_said_.end(), what) != failures_said_.end()) return;
  if (failures_said_.size() < 1000) failures_said_.push_back(what);
  logger_.error("flush failed: " + what +
                (stopped_ ? "" : " (the profiles in memory are kept; retrying at the next flush)"));
}

bool CollectionSession::flush() {
  bool ok = true;
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
    auto last_absorb = std::chrono::steady_clock::now();
    for (int32_t slot : pipeline_->profiled_slots()) {
      absorb_if_due(last_absorb);
      const ImageProfile& profile = *pipeline_->profile(slot);
      if (profile.samples() == 0 && !profile.has_branch_stacks()) continue;
      LoadedImage& image = *pipeline_->image(slot);
      const std::string directory = image.identity().directory_name();
      auto written = written_.find(directory);
      if (!events_changed && written != written_.end() && written->second == profile.revision()) continue;
      BinaryProfileSnapshot s;
      s.identity = image.identity();
      s.fdata = FdataWriter::to_no_lbr(FunctionProfile::build(profile.ips(), image.symbols()), events);
      s.samples = profile.samples();
      s.first_sample_ns = profile.first_ns();
      s.last_sample_ns = profile.last_ns();
      s.event = events.front();
      s.events = events;
      s.ips = profile.ips();
      BranchSamples branches;
      if (profile.has_branch_stacks()) {
        branches = profile.branch_samples();
        s.branches = &branches;
      }
      s.render = [&](const ImageCounts& counts) { return render_profiles(image, counts, render_); };
      // One binary that cannot be written (a full disk, an entry planted under its name) does
      // not keep the others from being tried.
      try {
        store_->write_binary(s);
        written_[directory] = profile.revision();
      } catch (const std::exception& e) {
        ok = false;
        report_failure(e.what());
      }
      // What rendering decoded (instructions, inline chains, line tables) grows with every
      // address the image's profile ever held; kept between flushes it would make a long-lived
      // image's memory grow all run long. The next flush decodes again what it needs.
      image.drop_caches();
    }
    written_events_ = events;
    absorb_if_due(last_absorb);
    if (!settings_.summary_file.empty()) store_->write_collection(settings_.summary_file, status());
    // Everything is on disk: images no process maps any more are released (a long run's state
    // stays bounded); their counts are read back from their directory if they come back. After
    // a failed write nothing is released: those counts exist only in memory.
    if (ok) {
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
    ok = false;
    report_failure(e.what());
  }
  for (const auto& w : pipeline_->take_warnings()) logger_.warning(w);
  for (const auto& w : store_->take_warnings()) logger_.warning(w);
  return ok;
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

bool CollectionSession::stop() {
  if (stopped_) return true;
  stopped_ = true;
  engine_->finish(*pipeline_);
  const bool ok = flush();
  for (const std::string& b : settings_.binaries) {
    if (!mapped_selector_) break;
    const bool matched = names_build_id(b) ? mapped_selector_->matched_build_id(*BuildId::from_hex(b))
                                           : mapped_selector_->matched_path(realpath_or(b)) || mapped_selector_->matched_path(b);
    if (!matched) logger_.warning("{binaries} " + b + " was not mapped by any profiled process: no profile for it");
  }
  const EngineCounters c = engine_->counters();
  logger_.note(std::to_string(pipeline_->counts().samples) + " samples, " +
               std::to_string(pipeline_->counts().outcomes[SampleOutcome::Mapped]) + " in " +
               std::to_string(pipeline_->profiled_slots().size()) + " profiled binaries, " +
               std::to_string(c.lost_samples) + " lost; profiles in " +
               settings_.output_dir);
  if (c.lost_samples > 0) {
    const uint64_t total = pipeline_->counts().samples + c.lost_samples;
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%", 100.0 * static_cast<double>(c.lost_samples) / static_cast<double>(total));
    logger_.warning(std::to_string(c.lost_samples) + " samples (" + share + ") were lost in " +
                    std::to_string(c.lost_records) +
                    " ring-buffer overruns: a larger {mmap_pages} or a lower {frequency} (a higher {period}) "
                    "keeps them");
  }
  return ok;
}

}  // namespace profcollect
