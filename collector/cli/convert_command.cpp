#include "collector/cli/convert_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <thread>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <memory>
#include <sstream>

#include "collector/cli/cli_error.h"
#include "collector/cli/cli_spelling.h"
#include "collector/cli/spe_summary.h"
#include "collector/cli/progress.h"
#include "collector/input/perf_data_reader.h"
#include "collector/input/perf_script_reader.h"
#include "collector/pipeline/recording_pipeline.h"
#include "mapper/target_image_selector.h"
#include "output/atomic_file.h"
#include "output/output_file.h"
#include "output/function_profile.h"
#include "output/profile_directory.h"
#include "output/profile_renderer.h"

namespace profcollect {

namespace {

// A conversion has the machine: two threads read a binary's debug info where there are two CPUs.
unsigned conversion_threads() { return std::thread::hardware_concurrency() >= 2 ? 2 : 1; }

double percent_of(uint64_t part, uint64_t whole) { return whole ? 100.0 * part / whole : 0.0; }

// `fp`: the samples per function symbol, when a format needed them (else the binary's share of
// the samples alone is said).
void print_summary(const ConvertOptions& o, const std::string& spe_summary, const PipelineCounts& t,
                   uint64_t in_binary, const FunctionProfile* fp) {
  const std::string& input = o.perf_script.empty() ? o.perf_data : o.perf_script;
  std::fprintf(stderr, "profcollect: %s: %llu samples, %llu lost\n", input.c_str(),
               static_cast<unsigned long long>(t.samples), static_cast<unsigned long long>(t.lost));
  if (!spe_summary.empty()) {
    std::fprintf(stderr, "profcollect: %s: %s\n", input.c_str(), spe_summary.c_str());
  }
  if (fp == nullptr) {
    std::fprintf(stderr, "profcollect: %s: %llu samples (%.1f%%)\n", o.binary.c_str(),
                 static_cast<unsigned long long>(in_binary), percent_of(in_binary, t.samples));
  } else {
    std::fprintf(stderr, "profcollect: %s: %llu samples (%.1f%%) in %llu functions",
                 o.binary.c_str(), static_cast<unsigned long long>(fp->symbolized),
                 percent_of(fp->symbolized, t.samples),
                 static_cast<unsigned long long>(fp->totals().size()));
    if (fp->unsymbolized) {
      std::fprintf(stderr, ", %llu in no function symbol",
                   static_cast<unsigned long long>(fp->unsymbolized));
    }
    std::fprintf(stderr, "\n");
  }
  std::string others;
  for (size_t i = 1; i < kSampleOutcomeCount; ++i) {
    auto o2 = static_cast<SampleOutcome>(i);
    if (o2 == SampleOutcome::NoSymbol || t.outcomes[o2] == 0) continue;
    others += "  " + std::string(outcome_name(o2)) + " " + std::to_string(t.outcomes[o2]);
  }
  if (!others.empty()) std::fprintf(stderr, "profcollect: not in the binary:%s\n", others.c_str());
}

// What BOLT address translation made of a BOLTed binary's samples, or why it could not.
void print_translation(const std::string& binary, const BoltedBinary& bolted,
                       const FunctionProfile& fp) {
  if (!fp.translated) {
    std::fprintf(stderr, "profcollect: warning: %s: %s%s\n", binary.c_str(),
                 bolted.reason().c_str(),
                 bolted.status() == BatStatus::Unreadable ? "; profiled as untranslated" : "");
    return;
  }
  const TranslationCounts& t = fp.translation;
  std::fprintf(stderr,
               "profcollect: %s: BOLTed; %llu of its samples (%.1f%%) translated to the input "
               "binary (build-id %s) by BAT, %llu of them in cold fragments; %llu in functions "
               "BOLT did not rewrite\n",
               binary.c_str(), static_cast<unsigned long long>(t.translated),
               percent_of(t.translated, fp.symbolized + fp.unsymbolized),
               bolted.input_build_id().to_hex().c_str(),
               static_cast<unsigned long long>(t.cold_fragments),
               static_cast<unsigned long long>(t.not_rewritten));
}

}  // namespace

std::vector<ProfileFormat> parse_formats(const std::string& list) {
  try {
    return parse_format_list(list);
  } catch (const FormatListError& e) {
    throw CliError(in_cli_terms(e.what()), 2);
  }
}

namespace {

// Whether `path` starts with perf.data's magic ("PERFILE2"); false for anything unreadable (the
// reader reports that itself). O_NONBLOCK: a FIFO is never waited on here.
bool is_perf_data_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  char magic[8] = {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const bool is = regular &&
                  ::pread(fd, magic, sizeof magic, 0) == static_cast<ssize_t>(sizeof magic) &&
                  std::memcmp(magic, "PERFILE2", sizeof magic) == 0;
  ::close(fd);
  return is;
}

// Several files (several formats, or one that writes two, as Propeller's) go into a directory,
// with a meta.json; one goes where -o says.
bool writes_directory(const ConvertOptions& o) {
  return o.formats.size() > 1 ||
         std::any_of(o.formats.begin(), o.formats.end(),
                     [](ProfileFormat f) { return !f->companion_file.empty(); });
}

// Where each output goes: the -o file itself for one file, DIR/<name> for several.
std::string output_path(const ConvertOptions& o, std::string_view name_in_dir) {
  return writes_directory(o) ? o.output + "/" + std::string(name_in_dir) : o.output;
}

}  // namespace

namespace {

// What a conversion keeps of its input once it is read.
struct ReadInput {
  PipelineCounts tally;
  ImageCounts counts;                 // the binary's
  std::optional<FunctionProfile> fp;  // per function symbol, when a format or BAT needs them
  std::vector<std::string> events;    // of the binary's samples
  std::string spe_summary;            // spe_summary_line() of the recording
};

// Reads the input into the binary's counts, or throws CliError when it has none of them (after
// a warning when the binary was matched by file name only).
ReadInput read_input(const ConvertOptions& o, const std::string& input,
                     const std::shared_ptr<LoadedImage>& target) {
  std::unique_ptr<RecordSource> source;
  if (!o.perf_script.empty()) {
    source = PerfScriptReader::open(o.perf_script);
  } else {
    source = open_perf_data(o.perf_data);
  }
  const std::string& recorded_arch = source->session().arch;
  if (!target->elf()->runs_on(recorded_arch)) {
    throw CliError(o.binary + ": is an ELF file for " + std::string(target->elf()->machine_name()) +
                   ", but " + input + " was recorded on " + recorded_arch);
  }
  TargetImageSelector selector(target, o.ignore_build_id, recorded_build_ids(*source));
  PipelineOptions po;
  po.pid = o.pid;
  const bool ranges = std::any_of(o.formats.begin(), o.formats.end(),
                                  [](ProfileFormat f) { return f->branch_ranges; });
  // -nl: BOLT's profile from the IP samples alone.
  po.bolt_branches = std::any_of(o.formats.begin(), o.formats.end(), [&](ProfileFormat f) {
    return f->branch_stacks && !(o.no_lbr && f == format_named("bolt"));
  });
  po.branch_stacks = ranges || po.bolt_branches;
  // Arm SPE samples carry one branch each: no ranges between branches to count; their AutoFDO
  // profile comes from the IP samples.
  po.branch_ranges = ranges && !source->session().arm_spe;
  SamplePipeline pipeline(selector, po);
  try {
    read_recording(*source, pipeline, make_progress_reporter("reading " + input, o.quiet));
  } catch (...) {
    finish_progress();
    throw;
  }
  finish_progress();

  ReadInput out;
  PipelineCounts& tally = out.tally;
  tally = pipeline.counts();
  const std::vector<int32_t> slots = pipeline.profiled_slots();
  static const ImageProfile kNoSamples(*target, false);
  const ImageProfile& profile = slots.empty() ? kNoSamples : *pipeline.profile(slots.front());
  // The samples per function symbol, for BOLT's formats and a BOLTed binary's translation: the
  // symbol table is not read for the other formats (a kernel's costs more than its profile).
  const bool function_symbols = target->bolted().status() != BatStatus::NotBolted ||
                                std::any_of(o.formats.begin(), o.formats.end(),
                                            [](ProfileFormat f) { return f->function_symbols; });
  if (function_symbols) {
    out.fp = FunctionProfile::build(profile.ips(), target->symbols(), &target->bolted());
    tally.outcomes.counts[static_cast<size_t>(SampleOutcome::Mapped)] -= out.fp->unsymbolized;
    tally.outcomes.add(SampleOutcome::NoSymbol, out.fp->unsymbolized);
  }

  if (tally.samples == 0) {
    throw CliError(input + ": holds no samples" +
                   (o.pid ? " of pid " + std::to_string(*o.pid) : std::string()));
  }
  const BuildId& build_id = target->identity().build_id;
  if (profile.ips().empty()) {
    uint64_t mismatched = tally.outcomes[SampleOutcome::BuildIdMismatch];
    if (mismatched) {
      const std::string recorded_id = selector.mismatched_build_id().empty()
                                          ? std::string("unknown")
                                          : selector.mismatched_build_id().to_hex();
      if (target->kind() == ImageKind::Kernel) {
        throw CliError(input + ": " + std::to_string(mismatched) +
                       " samples are in the kernel it recorded (build-id " + recorded_id +
                       "), not in " + o.binary + " (build-id " + build_id.to_hex() +
                       "): another kernel build; pass --ignore-build-id to use them anyway");
      }
      throw CliError(input + ": " + std::to_string(mismatched) + " samples are in " +
                     selector.mismatched_path() + " (build-id " + recorded_id +
                     "), a file named like " + o.binary +
                     " whose build-id differs from the binary's (" + build_id.to_hex() +
                     "); pass --ignore-build-id to use them anyway");
    }
    throw CliError(input + ": none of its " + std::to_string(tally.samples) + " samples is in " +
                   o.binary + " (build-id " +
                   (build_id.empty() ? std::string("none") : build_id.to_hex()) +
                   "): profiled another binary?");
  }

  if (selector.matched_by_name() && !build_id.empty() && !o.quiet) {
    const SessionInfo& session = source->session();
    const std::string why =
        session.build_id_table_damaged
            ? std::string("its build-id table is damaged (the file is cut short)")
        : session.mmap2_false_build_id_flags
            ? std::to_string(session.mmap2_false_build_id_flags) +
                  " of its MMAP2 records are flagged as carrying a build-id but hold a device and "
                  "inode "
                  "(the kernel does so when another tool records build-ids at the same time)"
            : std::string("it records no build-id for the file");
    if (target->kind() == ImageKind::Kernel) {
      std::fprintf(stderr,
                   "profcollect: warning: %s: %s; its kernel mapping was taken for %s unchecked\n",
                   input.c_str(), why.c_str(), o.binary.c_str());
    } else {
      std::fprintf(stderr, "profcollect: warning: %s: %s; %s was matched by file name only\n",
                   input.c_str(), why.c_str(), o.binary.c_str());
    }
  }
  for (size_t i = 0; i < tally.per_attr.size() && i < source->session().attrs.size(); ++i) {
    if (tally.per_attr[i]) out.events.push_back(source->session().attrs[i].name);
  }
  out.counts = profile.counts(out.events, function_symbols);
  out.spe_summary = spe_summary_line(source->session());
  return out;
}

}  // namespace

int run_convert(const ConvertOptions& o) {
  if (o.perf_data.empty() == o.perf_script.empty()) {
    throw CliError("name the input: -p PERF.DATA or --perf-script FILE", 2);
  }
  const std::string& input = o.perf_script.empty() ? o.perf_data : o.perf_script;
  if (writes_directory(o) && o.output == "-") {
    throw CliError(
        "-o -: several files (several formats, or propeller's two) are written into a directory, "
        "not to standard output",
        2);
  }
  if (!o.perf_script.empty() && is_perf_data_file(o.perf_script)) {
    throw CliError(o.perf_script + ": is a perf.data file, not perf script text: give it with -p",
                   2);
  }
  // One render: each address is symbolized once, nothing is kept for a next one.
  std::shared_ptr<LoadedImage> target = LoadedImage::open_file(
      o.binary, ImageLoadOptions{o.debug_dirs, conversion_threads(), /*keep_symbolized=*/false});
  if (o.kernel && target->kind() != ImageKind::Kernel &&
      target->kind() != ImageKind::KernelModule) {
    throw CliError(
        o.binary +
            ": --kernel: not a kernel image (an ET_EXEC linked in the upper half of the address "
            "space, with a _text or _stext symbol) nor a kernel module (ET_REL)",
        2);
  }
  if (target->translator().empty()) {
    // A module from a perf.data is placed with .text at the start of its memory (perf records
    // no section layout, and assumes as much): one without code in .text has nothing placed.
    throw CliError(o.binary + (target->kind() == ImageKind::Kernel
                                   ? ": a kernel image without a _text or _stext symbol"
                               : target->kind() == ImageKind::KernelModule
                                   ? ": a kernel module without code in .text: a "
                                     "recording gives no other section's place"
                                   : ": has no executable segment"));
  }
  if (writes_directory(o)) {
    std::error_code ec;
    std::filesystem::create_directories(o.output, ec);
    if (ec || !std::filesystem::is_directory(o.output)) {
      throw CliError(o.output + ": cannot create the output directory" +
                     (ec ? ": " + ec.message() : std::string()));
    }
  }
  // Made before any work so that an unwritable destination fails at once; each is removed
  // unless its profile is complete.
  std::map<std::string, std::unique_ptr<OutputFile>> outputs;
  for (ProfileFormat f : o.formats) {
    outputs[std::string(f->file)] = std::make_unique<OutputFile>(output_path(o, f->file));
    if (!f->companion_file.empty()) {
      outputs[std::string(f->companion_file)] =
          std::make_unique<OutputFile>(output_path(o, f->companion_file));
    }
  }
  std::unique_ptr<OutputFile> meta_out;
  if (writes_directory(o)) meta_out = std::make_unique<OutputFile>(o.output + "/meta.json");

  // A Propeller profile names blocks by the address map: a binary without it fails at once.
  if (std::any_of(o.formats.begin(), o.formats.end(),
                  [](ProfileFormat f) { return f->block_address_map; }) &&
      target->bb_addr_map() == nullptr) {
    throw CliError(target->bb_addr_map_error());
  }
  // AutoFDO needs the debug info; a binary without it still gets its other profiles, and the
  // error is reported after them.
  std::string debug_error;
  const bool needs_debug = std::any_of(o.formats.begin(), o.formats.end(),
                                       [](ProfileFormat f) { return f->debug_info; });
  const bool all_need_debug = std::all_of(o.formats.begin(), o.formats.end(),
                                          [](ProfileFormat f) { return f->debug_info; });
  if (needs_debug && !target->debug()) {
    if (all_need_debug) throw CliError(target->debug_error());
    debug_error = target->debug_error();
  }

  // The recording, the process table and the aggregator are let go once read: what the
  // rendering needs of them is a small part of their memory.
  ReadInput in = read_input(o, input, target);
  const uint64_t samples_in_binary = in.counts.ips.total();
  const ImageCounts& counts = in.counts;
  const std::optional<FunctionProfile>& fp = in.fp;
  const PipelineCounts& tally = in.tally;
  const std::vector<std::string>& events = in.events;
  RenderRequest request;
  request.formats = o.formats;
  request.no_lbr = o.no_lbr;
  const RenderedProfiles rendered = render_profiles(*target, counts, request);
  for (const auto& [format, why] : rendered.missing) {
    // What lacks debug info is said after the other profiles are written; anything else the
    // input cannot give fails the conversion.
    if (!format->debug_info)
      throw CliError(input + ": --format " + std::string(format->name) + ": " + why);
    if (debug_error.empty()) debug_error = why;
  }
  // All or nothing: every file is staged (written and fsynced beside its place; a full disk
  // fails here, with every earlier output untouched) before the first takes its place.
  for (const auto& [name, content] : rendered.files) outputs.at(name)->stage(content);
  if (meta_out) {
    ImageMeta meta;
    meta.samples = samples_in_binary;
    meta.events = events;
    if (counts.branches) meta.branch_stacks = counts.branches->stacks;
    meta.input = input;
    // The same schema as a binary's directory: the files' totals, which merge and report check.
    meta.file_totals = file_totals_of(rendered.files, rendered.branch_fdata, o.output);
    meta_out->stage(render_meta(target->identity(), meta, rendered));
  }
  for (const auto& [name, content] : rendered.files) outputs.at(name)->commit();
  if (meta_out) meta_out->commit();
  if (!o.quiet) {
    print_summary(o, in.spe_summary, tally, samples_in_binary, fp ? &*fp : nullptr);
    if (target->bolted().status() != BatStatus::NotBolted)
      print_translation(o.binary, target->bolted(), *fp);
    std::fprintf(stderr, "profcollect: wrote %s\n",
                 o.output == "-" ? "standard output" : o.output.c_str());
    if (rendered.meta.contains("unsymbolized_profgen_flags") && !writes_directory(o)) {
      std::fprintf(
          stderr, "profcollect: read it back with llvm-profgen --unsymbolized-profile %s %s\n",
          o.output.c_str(), rendered.meta["unsymbolized_profgen_flags"].get<std::string>().c_str());
    }
  }
  if (!debug_error.empty()) throw CliError(debug_error + " (the BOLT profile was written)");
  return 0;
}

}  // namespace profcollect
