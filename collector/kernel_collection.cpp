#include "collector/kernel_collection.h"

#include <filesystem>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "collector/kallsyms.h"
#include "collector/kernel_image_selector.h"
#include "collector/kernel_layout_records.h"
#include "output/atomic_file.h"
#include "output/json_text.h"
#include "output/range_profile.h"
#include "output/unsymbolized_writer.h"

namespace profcollect {

namespace {

constexpr size_t kTopFunctions = 20;

// A directory of our own: made 0700 if missing; a symlink or a non-directory in its place is
// refused, never followed.
void make_own_directory(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) == 0) return;
  if (errno != EEXIST) throw OutputError(path, std::strerror(errno));
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) throw OutputError(path, std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) throw OutputError(path, "exists and is not a directory (not followed)");
}

}  // namespace

KernelCollection::KernelCollection(KernelCollectionSettings settings, SessionLogger& logger)
    : settings_(std::move(settings)), logger_(logger) {
  // The vmlinux is checked before anything is opened: a wrong one is refused at once.
  image_ = locate_kernel_image(settings_.image);
  EventSelection selection = select_kernel_event(settings_.event, SelectionContext::of_this_process());
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
  images.load_options.debug_dirs = settings_.debug_dirs;
  selector_ = std::make_shared<KernelImageSelector>(images);
  if (selector_->kernel() && !selector_->kernel()->debug()) {
    logger_.warning("{vmlinux} " + image_.path + " has no usable debug info: no AutoFDO profile from it (" +
                    selector_->kernel()->debug_error() + ")");
  }
  if (image_.path.empty()) {
    logger_.note("no vmlinux of the running kernel: writing llvm-profgen's unsymbolized profile (to finish "
                 "where the vmlinux is, with llvm-profgen --kernel --unsymbolized-profile) and a "
                 "function-level summary from " + settings_.kallsyms_path);
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
  s.formats = settings_.formats.empty()
                  ? std::vector<ProfileFormat>{ProfileFormat::Autofdo, ProfileFormat::Unsymbolized}
                  : settings_.formats;
  session_ = std::make_unique<CollectionSession>(std::move(s), logger_);
  for (const Record& r : layout_->records()) session_->consume(r);
}

KernelCollection::~KernelCollection() = default;

bool KernelCollection::write_kallsyms_profile(KernelCollectionResult& result) {
  const std::unordered_map<uint64_t, uint64_t>& addresses = session_->pipeline().kernel_addresses();
  std::vector<ModuleRange> ranges;
  for (const LoadedModule& m : modules_) {
    if (m.address && m.size) ranges.push_back({m.name, m.address, m.address + m.size});
  }
  const KernelFunctionSummary summary =
      summarize_kernel_functions(addresses, kallsyms_.functions, layout_->text_end(), ranges);
  result.samples += summary.samples;
  for (const auto& [name, count] : summary.modules) result.module_samples += count;
  for (size_t i = 0; i < summary.functions.size() && i < kTopFunctions; ++i) result.top.push_back(summary.functions[i]);

  // The kernel image's samples as one-instruction ranges, offsets from the runtime _text.
  RangeProfile ranges_profile;
  uint64_t image_samples = 0;
  const uint64_t text = layout_->text(), end = layout_->text_end();
  for (const auto& [address, count] : addresses) {
    if (address < text || (end && address >= end)) continue;
    ranges_profile.ranges[{address, address}] += count;
    image_samples += count;
  }
  const std::string id = image_.running ? image_.running->to_hex() : "nobuildid";
  result.profile_dir = settings_.output_dir + "/kernel.kallsyms-" + id;
  make_own_directory(result.profile_dir);
  write_file_atomically(result.profile_dir + "/autofdo.unsym", write_unsymbolized_profile(ranges_profile, text));
  write_file_atomically(result.profile_dir + "/functions.txt", render_kernel_functions(summary));
  nlohmann::ordered_json meta;
  meta["path"] = "[kernel.kallsyms]";
  meta["build_id"] = image_.running ? image_.running->to_hex() : "";
  meta["samples"] = image_samples;
  meta["event"] = session_->event().name;
  meta["formats"] = {"autofdo.unsym", "functions.txt"};
  meta["unsymbolized"] = unsymbolized_kind_name(UnsymbolizedKind::IpSamples);
  meta["unsymbolized_base"] = "runtime _text";
  meta["llvm_profgen"] = std::string("llvm-profgen --kernel --binary=vmlinux ") +
                         unsymbolized_profgen_flags(UnsymbolizedKind::IpSamples) + " --output=kernel.afdo";
  write_file_atomically(result.profile_dir + "/meta.json", json_text(meta) + "\n");
  return true;
}

KernelCollectionResult KernelCollection::finish() {
  KernelCollectionResult result;
  result.output_dir = settings_.output_dir;
  result.ok = session_->stop();
  const PipelineCounts& counts = session_->pipeline().counts();
  // Samples per module mapping, from the session's own per-file counts.
  std::vector<std::pair<std::string, uint64_t>> per_module;
  for (const auto& [dso, count] : counts.per_dso) {
    const Dso& d = session_->pipeline().processes().dso(dso);
    if (d.kernel && classify_image(d) == ImageKind::KernelModule) per_module.emplace_back(module_name(d.path), count);
  }
  if (selector_->kernel()) {
    result.symbolized = true;
    result.profile_dir = settings_.output_dir + "/" + selector_->kernel()->identity().directory_name();
    result.samples = counts.samples;  // kernel-only events: every sample is the kernel's
  }
  try {
    if (!result.symbolized) write_kallsyms_profile(result);
    for (const auto& [name, count] : per_module) {
      if (result.symbolized) result.module_samples += count;
    }
    nlohmann::ordered_json j;
    j["event"] = session_->event().name;
    j["engine_note"] = session_->event().engine_note;
    j["samples"] = counts.samples;
    j["kernel_samples"] = result.samples;
    j["module_samples"] = result.module_samples;
    nlohmann::ordered_json modules = nlohmann::ordered_json::object();
    for (const auto& [name, count] : per_module) modules[name] = count;
    j["modules"] = modules;
    j["vmlinux"] = image_.path;
    j["running_build_id"] = image_.running ? image_.running->to_hex() : "";
    j["profile_dir"] = result.profile_dir;
    j["symbolized"] = result.symbolized;
    write_file_atomically(settings_.output_dir + "/kernel.json", json_text(j) + "\n");
  } catch (const std::exception& e) {
    logger_.error(std::string("kernel profile: ") + e.what());
    result.ok = false;
  }
  return result;
}

}  // namespace profcollect
