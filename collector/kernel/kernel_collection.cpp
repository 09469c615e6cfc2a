#include "collector/kernel/kernel_collection.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "collector/kernel/kallsyms.h"
#include "collector/kernel/kernel_image_selector.h"
#include "collector/kernel/kernel_layout_records.h"
#include "output/json_text.h"
#include "output/profile_directory.h"
#include "output/profile_generation.h"

namespace profcollect {

namespace {

constexpr size_t kTopFunctions = 20;

}  // namespace

KernelCollection::KernelCollection(KernelCollectionSettings settings, SessionLogger& logger)
    : settings_(std::move(settings)), logger_(logger) {
  // The vmlinux is checked before anything is opened: a wrong one is refused at once.
  image_ = locate_kernel_image(settings_.image);
  EventSelection selection =
      select_kernel_event(settings_.event, SelectionContext::of_this_process());
  for (const std::string& n : image_.notes) logger_.note(n);
  kallsyms_ = read_kallsyms(settings_.kallsyms_path);
  modules_ = read_proc_modules(settings_.modules_path);
  layout_ = std::make_unique<KernelLayoutRecords>(kallsyms_, modules_);

  KernelImageSelection images;
  images.vmlinux = image_.path;
  images.modules_dir = settings_.modules_dir;
  // Not given: where the distribution installs the running kernel's modules, when there are any.
  if (!images.modules_dir && !modules_.empty()) {
    const std::string installed = "/lib/modules/" + running_kernel_release();
    std::error_code ec;
    if (std::filesystem::is_directory(installed, ec)) images.modules_dir = installed;
  }
  images.sys_module = settings_.sys_module;
  for (const KernelSymbol& k : kallsyms_.functions) {
    if (!k.module.empty()) images.kallsyms.push_back(k);
  }
  images.load_options.debug_dirs = settings_.debug_dirs;
  selector_ = std::make_shared<KernelImageSelector>(images);
  if (selector_->kernel() && !selector_->kernel()->debug()) {
    logger_.warning("{vmlinux} " + image_.path +
                    " has no usable debug info: no AutoFDO profile from it (" +
                    selector_->kernel()->debug_error() + ")");
  }
  if (image_.path.empty()) {
    // Symbols and lines need the vmlinux: without it only the kallsyms route's files are made.
    for (ProfileFormat f : settings_.formats) {
      if (f != format_named("unsymbolized")) {
        logger_.warning("{format} " + std::string(f->name) +
                        " needs a vmlinux of the running kernel: not written");
      }
    }
    logger_.note(
        "no vmlinux of the running kernel: writing llvm-profgen's unsymbolized profile and samples "
        "per function from " +
        settings_.kallsyms_path);
  } else {
    logger_.note("kernel image " + image_.path + " (build-id " + image_.build_id.to_hex() + ")");
  }

  SessionSettings s;
  s.target.kind = TargetKind::SystemWide;
  s.selection = selection;
  s.event = selection.name;
  s.mmap_pages = settings_.mmap_pages;
  s.output_dir = settings_.output_dir;
  s.debug_dirs = settings_.debug_dirs;
  s.selector = selector_;
  s.kernel_addresses = true;
  if (settings_.cumulative)
    s.summary_file.clear();  // the output directory's collection.json is the daemon's
  s.summary_line = false;    // said by the kernel command and kernel.json
  s.formats = settings_.formats.empty() ? std::vector<ProfileFormat>{format_named("autofdo"),
                                                                     format_named("unsymbolized")}
                                        : settings_.formats;
  session_ = std::make_unique<CollectionSession>(std::move(s), logger_);
  for (const Record& r : layout_->records()) session_->consume(r);
}

KernelCollection::~KernelCollection() = default;

std::string KernelCollection::kallsyms_directory() const {
  return "kernel.kallsyms-" +
         (image_.running ? image_.running->to_hex() : std::string("nobuildid"));
}

const KallsymsProfile& KernelCollection::earlier_kallsyms_profile(const DirectoryHandle& output) {
  if (earlier_) return *earlier_;
  earlier_.emplace();
  const std::string name = kallsyms_directory();
  const std::optional<DirectoryHandle> dir = output.open_subdirectory(name);
  if (!dir) return *earlier_;
  // A damaged directory's files are set aside by the codec (output/profile_directory.h): kept,
  // never overwritten; the next generation carries them along.
  KallsymsDirectory read = read_kallsyms_directory(*dir, DirectoryStrictness::Store);
  if (read.profile) {
    *earlier_ = std::move(*read.profile);
  } else {
    logger_.warning("the earlier kernel profile cannot be read: " + set_aside_warning(read.faults));
  }
  return *earlier_;
}

void KernelCollection::write_kallsyms_profile(KernelCollectionResult& result) {
  // This run's kernel samples, less what was counted before the directory was forgotten.
  std::unordered_map<uint64_t, uint64_t> addresses = session_->pipeline().kernel_addresses();
  for (const auto& [address, count] : forgotten_) {
    auto it = addresses.find(address);
    if (it != addresses.end()) it->second -= std::min(it->second, count);
  }
  std::vector<ModuleRange> ranges;
  for (const LoadedModule& m : modules_) {
    if (m.address && m.size) ranges.push_back({m.name, m.address, m.address + m.size});
  }
  KallsymsProfile run;
  run.functions =
      summarize_kernel_functions(addresses, kallsyms_.functions, layout_->text_end(), ranges);
  result.samples += run.functions.samples;
  for (const auto& [name, count] : run.functions.modules) result.module_samples += count;
  for (size_t i = 0; i < run.functions.functions.size() && i < kTopFunctions; ++i) {
    result.top.push_back(run.functions.functions[i]);
  }
  // The kernel image's samples as offsets from the runtime _text.
  const uint64_t text = layout_->text(), end = layout_->text_end();
  for (const auto& [address, count] : addresses) {
    if (address < text || (end && address >= end) || !count) continue;
    run.text_offsets.add(address - text, count);
  }
  // Sample times at the resolution of the writes: the write that first saw a sample, and the
  // last one that saw new ones.
  const uint64_t now_ns =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  if (run.functions.samples && !first_sample_ns_) first_sample_ns_ = now_ns;
  if (run.functions.samples != samples_at_last_write_) last_sample_ns_ = now_ns;
  samples_at_last_write_ = run.functions.samples;
  run.first_sample_ns = first_sample_ns_;
  run.last_sample_ns = last_sample_ns_;

  const DirectoryHandle output = DirectoryHandle::open_path(settings_.output_dir, 0700);
  KallsymsProfile profile;
  if (settings_.cumulative) profile = earlier_kallsyms_profile(output);
  add_kallsyms_profile(profile, run);
  KallsymsProfileLabels labels;
  labels.build_id = image_.running ? image_.running->to_hex() : "";
  labels.event = session_->event().name;
  result.profile_dir = output.path_of(kallsyms_directory());
  write_generation(output, kallsyms_directory(), render_kallsyms_profile(profile, labels));
}

std::string KernelCollection::profile_directory() const {
  return selector_->kernel() ? selector_->kernel()->identity().directory_name()
                             : kallsyms_directory();
}

bool KernelCollection::forget(const std::string& directory) {
  if (!selector_->kernel() && directory == kallsyms_directory()) {
    forgotten_ = session_->pipeline().kernel_addresses();
    earlier_.emplace();  // the directory is gone: nothing earlier to add to
    first_sample_ns_ = last_sample_ns_ = samples_at_last_write_ = 0;
    return true;
  }
  return session_->drop_binary(directory);
}

namespace {

// The session's first flush failure, as a result's error.
void take_flush_failure(const CollectionSession& session, bool ok, KernelCollectionResult& result) {
  if (ok) return;
  result.ok = false;
  const auto& flushed = session.last_flush();
  if (result.error.empty() && flushed && !flushed->failures.empty())
    result.error = flushed->failures.front().reason;
  if (result.error.empty() && flushed && flushed->cut_short)
    result.error = "the final flush was cut short";
}

}  // namespace

KernelCollectionResult KernelCollection::flush() {
  const bool ok = session_->flush();
  KernelCollectionResult result = write_profiles();
  take_flush_failure(*session_, ok, result);
  return result;
}

KernelCollectionResult KernelCollection::finish(
    std::optional<std::chrono::steady_clock::time_point> deadline) {
  const bool ok = session_->stop(deadline);
  KernelCollectionResult result = write_profiles();
  take_flush_failure(*session_, ok, result);
  return result;
}

KernelCollectionResult KernelCollection::write_profiles() {
  KernelCollectionResult result;
  result.output_dir = settings_.output_dir;
  const PipelineCounts& counts = session_->pipeline().counts();
  // Samples per module mapping, from the session's own per-file counts.
  std::vector<std::pair<std::string, uint64_t>> per_module;
  for (const auto& [dso, count] : counts.per_dso) {
    const Dso& d = session_->pipeline().processes().dso(dso);
    if (d.kernel && classify_image(d) == ImageKind::KernelModule)
      per_module.emplace_back(module_name(d.path), count);
  }
  if (selector_->kernel()) {
    result.symbolized = true;
    result.profile_dir = settings_.output_dir + "/" + profile_directory();
    result.samples = counts.samples;  // kernel-only events: every sample is the kernel's
    for (const auto& [name, count] : per_module) result.module_samples += count;
  }
  try {
    if (!result.symbolized) write_kallsyms_profile(result);
    nlohmann::ordered_json j;
    j["event"] = session_->event().name;
    j["engine_note"] = session_->event().engine_note;
    if (!session_->event().probe_note.empty())
      j["branch_hardware_probed"] = session_->event().probe_note;
    j["samples"] = counts.samples;
    j["lost"] = session_->status().counters.lost_samples;
    j["kernel_samples"] = result.samples;
    j["module_samples"] = result.module_samples;
    nlohmann::ordered_json modules = nlohmann::ordered_json::object();
    for (const auto& [name, count] : per_module) modules[name] = count;
    j["modules"] = modules;
    // The modules whose .ko was found (each has a profile of its own), and those of them whose
    // sections were placed by their kallsyms symbols (no /sys/module listing).
    j["module_profiles"] = selector_->modules_found();
    j["modules_placed_by_kallsyms"] = selector_->modules_placed_by_kallsyms();
    j["vmlinux"] = image_.path;
    j["running_build_id"] = image_.running ? image_.running->to_hex() : "";
    j["profile_dir"] = result.profile_dir;
    j["symbolized"] = result.symbolized;
    j["cumulative"] = settings_.cumulative;
    DirectoryHandle::open_path(settings_.output_dir, 0700)
        .replace_file("kernel.json", json_text(j) + "\n", 0600);
  } catch (const std::exception& e) {
    logger_.error(std::string("kernel profile: ") + e.what());
    result.ok = false;
    result.error = e.what();
  }
  return result;
}

}  // namespace profcollect
