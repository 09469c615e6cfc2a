#include "collector/cli/report_command.h"

#include <algorithm>
#include <set>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "collector/cli/cli_error.h"
#include "collector/cli/spe_summary.h"
#include "collector/cli/progress.h"
#include "collector/cli/report_directory.h"
#include "collector/input/perf_data_reader.h"
#include "collector/pipeline/recording_pipeline.h"
#include "mapper/target_image_selector.h"
#include "output/function_profile.h"
#include "output/json_text.h"
#include "output/profile_renderer.h"

namespace profcollect {

namespace {

struct DsoCount {
  std::string path;
  std::string build_id;
  uint64_t samples;
};

// perf names a module's samples after the file that made its dso first: the path the file's
// build-id table (read before the data) gives it, else "[name]" from its MMAP record (pipe mode,
// where the build-ids come last).
std::string module_display_name(const Dso& d, const std::set<std::string>& named_before_data) {
  return named_before_data.contains(d.path) ? d.path : dso_display_name(d);
}

std::vector<DsoCount> dso_counts(const PipelineCounts& t, const ProcessTable& processes,
                                 const SessionInfo& session,
                                 const std::set<std::string>& named_before_data) {
  // Several Dso entries can share a display name (one file seen with and without a build-id, or
  // kernel text and its aliases): perf script's dso column counts them together.
  std::vector<DsoCount> out;
  auto add = [&out](const std::string& name, const std::string& bid, uint64_t n) {
    for (auto& d : out) {
      if (d.path == name) {
        d.samples += n;
        if (d.build_id.empty()) d.build_id = bid;
        return;
      }
    }
    out.push_back({name, bid, n});
  };
  for (const auto& [index, n] : t.per_dso) {
    const Dso& d = processes.dso(index);
    std::string bid = d.build_id.empty() ? std::string() : d.build_id.to_hex();
    const bool module = d.kernel && !d.path.starts_with("[kernel.kallsyms]") &&
                        !d.path.starts_with("[guest.kernel");
    std::string name = module ? module_display_name(d, named_before_data) : dso_display_name(d);
    if (bid.empty()) {
      // The build-id table names the kernel "[kernel.kallsyms]", its MMAP "[kernel.kallsyms]_text".
      for (const auto& e : session.build_ids) {
        if (e.filename == d.path || (d.kernel && e.filename == name)) {
          bid = e.build_id.to_hex();
          break;
        }
      }
    }
    add(name, bid, n);
  }
  for (const auto& [pid, n] : t.perf_map_per_pid) add(perf_map_name(pid), "", n);
  if (t.no_dso) add("[unknown]", "", t.no_dso);
  std::sort(out.begin(), out.end(), [](const DsoCount& a, const DsoCount& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.path < b.path;
  });
  return out;
}

double share(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / whole : 0.0;
}

// A function as perf names it: its symbol-table name. BOLT's names ("step/2" for the second
// local "step") tell apart functions a profile must not merge, which a reader does not need.
const std::string& shown_name(const FunctionSymbol& f) {
  return f.raw_name.empty() ? f.name : f.raw_name;
}

}  // namespace

int run_report(const ReportOptions& o) {
  if (is_collection_directory(o.input)) return run_directory_report(o);
  std::shared_ptr<LoadedImage> target;
  if (!o.binary.empty()) target = LoadedImage::open_file(o.binary, ImageLoadOptions{o.debug_dirs});

  std::unique_ptr<RecordSource> source = open_perf_data(o.input);
  std::unique_ptr<ImageSelector> selector;
  if (target) {
    selector = std::make_unique<TargetImageSelector>(target, o.ignore_build_id,
                                                     recorded_build_ids(*source));
  } else {
    selector = std::make_unique<NoImageSelector>();
  }
  PipelineOptions po;
  po.pid = o.pid;
  po.branch_stacks = false;  // the report counts samples, not branches
  SamplePipeline pipeline(*selector, po);
  std::set<std::string> named_before_data;
  for (const BuildIdEntry& e : source->session().build_ids) named_before_data.insert(e.filename);
  std::string damage;
  try {
    read_recording(*source, pipeline,
                   make_progress_reporter("reading " + o.input, o.quiet || o.json));
  } catch (const SourceError& e) {
    // Report what was read before the damage, then fail.
    damage = e.what();
  }
  finish_progress();
  PipelineCounts tally = pipeline.counts();
  const ProcessTable& processes = pipeline.processes();

  std::optional<FunctionProfile> fp;
  if (target) {
    IpProfile none;
    const std::vector<int32_t> slots = pipeline.profiled_slots();
    fp = FunctionProfile::build(slots.empty() ? none : pipeline.profile(slots.front())->ips(),
                                target->symbols(), &target->bolted());
    tally.outcomes.counts[static_cast<size_t>(SampleOutcome::Mapped)] -= fp->unsymbolized;
    tally.outcomes.add(SampleOutcome::NoSymbol, fp->unsymbolized);
  }
  auto dsos = dso_counts(tally, processes, source->session(), named_before_data);

  if (o.json) {
    // The schema shared with the report of an output directory (docs/usage.md): input, kind,
    // samples, lost, throttled, events, binaries (path, build_id, samples), problems; then
    // what only a recording has.
    nlohmann::ordered_json j;
    j["input"] = o.input;
    j["kind"] = "recording";
    j["samples"] = tally.samples;
    j["lost"] = tally.lost;
    j["throttled"] = tally.throttled;
    j["events"] = nlohmann::json::array();
    for (const auto& a : source->session().attrs) j["events"].push_back(a.name);
    j["binaries"] = nlohmann::json::array();
    for (const auto& d : dsos) {
      j["binaries"].push_back({{"path", d.path}, {"build_id", d.build_id}, {"samples", d.samples}});
    }
    j["problems"] = nlohmann::json::array();
    if (!damage.empty()) j["problems"].push_back(damage);
    if (source->session().arm_spe) j["arm_spe"] = spe_summary_json(source->session());
    if (target) {
      nlohmann::ordered_json b;
      b["path"] = o.binary;
      b["build_id"] = target->identity().build_id.to_hex();
      b["mapped"] = tally.outcomes[SampleOutcome::Mapped];
      nlohmann::ordered_json unmapped = nlohmann::ordered_json::object();
      for (size_t i = 1; i < kSampleOutcomeCount; ++i) {
        auto oc = static_cast<SampleOutcome>(i);
        unmapped[std::string(outcome_name(oc))] = tally.outcomes[oc];
      }
      b["unmapped"] = unmapped;
      if (target->bolted().status() != BatStatus::NotBolted)
        b["bolt_address_translation"] = translation_meta(target->bolted(), *fp);
      b["functions"] = nlohmann::json::array();
      auto totals = fp->totals();
      for (size_t i = 0; i < totals.size() && i < o.top; ++i) {
        b["functions"].push_back({{"name", shown_name(*totals[i].function)},
                                  {"samples", totals[i].count},
                                  {"share", share(totals[i].count, tally.samples)}});
      }
      j["binary"] = b;
    }
    std::cout << json_text(j) << "\n";
  } else {
    std::printf("%s: %llu samples, %llu lost, %llu throttling events\n", o.input.c_str(),
                static_cast<unsigned long long>(tally.samples),
                static_cast<unsigned long long>(tally.lost),
                static_cast<unsigned long long>(tally.throttled));
    if (const std::string spe = spe_summary_line(source->session()); !spe.empty())
      std::printf("%s\n", spe.c_str());
    std::printf("\n%10s %7s  %s\n", "samples", "share", "file");
    for (const auto& d : dsos) {
      std::printf("%10llu %6.2f%%  %s%s%s\n", static_cast<unsigned long long>(d.samples),
                  100 * share(d.samples, tally.samples), d.path.c_str(),
                  d.build_id.empty() ? "" : "  ", d.build_id.c_str());
    }
    if (target) {
      std::printf("\n%s (build-id %s): %llu samples mapped (%.2f%%)\n", o.binary.c_str(),
                  target->identity().build_id.empty()
                      ? "none"
                      : target->identity().build_id.to_hex().c_str(),
                  static_cast<unsigned long long>(tally.outcomes[SampleOutcome::Mapped]),
                  100 * share(tally.outcomes[SampleOutcome::Mapped], tally.samples));
      for (size_t i = 1; i < kSampleOutcomeCount; ++i) {
        auto oc = static_cast<SampleOutcome>(i);
        if (tally.outcomes[oc]) {
          std::printf("  unmapped, %-18s %10llu (%.2f%%)\n", std::string(outcome_name(oc)).c_str(),
                      static_cast<unsigned long long>(tally.outcomes[oc]),
                      100 * share(tally.outcomes[oc], tally.samples));
        }
      }
      if (target->bolted().status() != BatStatus::NotBolted) {
        std::printf("  %s\n", translation_line(translation_meta(target->bolted(), *fp),
                                               fp->symbolized + fp->unsymbolized)
                                  .c_str());
      }
      std::printf("\n%10s %7s  %s%s\n", "samples", "share", "function",
                  fp->translated ? " (of the input binary, through BAT)" : "");
      auto totals = fp->totals();
      for (size_t i = 0; i < totals.size() && i < o.top; ++i) {
        std::printf("%10llu %6.2f%%  %s\n", static_cast<unsigned long long>(totals[i].count),
                    100 * share(totals[i].count, tally.samples),
                    shown_name(*totals[i].function).c_str());
      }
    }
    std::fflush(stdout);
  }
  if (!damage.empty()) throw CliError(damage);
  return 0;
}

}  // namespace profcollect
