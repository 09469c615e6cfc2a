#include "collector/cli/convert_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "collector/cli/cli_error.h"
#include "collector/cli/progress.h"
#include "collector/cli/sample_tally.h"
#include "collector/cli/target_binary.h"
#include "collector/perf_data_reader.h"
#include "collector/perf_script_reader.h"
#include "mapper/autofdo_binary.h"
#include "mapper/debug_info_error.h"
#include "output/autofdo_writer.h"
#include "output/range_profile.h"
#include "output/unsymbolized_writer.h"
#include "output/atomic_file.h"
#include "mapper/bolt_block_map.h"
#include "output/fdata_branch_writer.h"
#include "output/fdata_writer.h"
#include "output/preagg_writer.h"
#include "output/function_profile.h"
#include "output/json_text.h"

namespace profcollect {

namespace {

double percent(uint64_t part, uint64_t whole) { return whole ? 100.0 * part / whole : 0.0; }

void print_summary(const ConvertOptions& o, const SampleTally& t, const FunctionProfile& fp,
                   size_t functions) {
  const std::string& input = o.perf_script.empty() ? o.perf_data : o.perf_script;
  std::fprintf(stderr, "profcollect: %s: %llu samples, %llu lost\n", input.c_str(),
               static_cast<unsigned long long>(t.samples), static_cast<unsigned long long>(t.lost));
  std::fprintf(stderr, "profcollect: %s: %llu samples (%.1f%%) in %llu functions",
               o.binary.c_str(), static_cast<unsigned long long>(fp.symbolized),
               percent(fp.symbolized, t.samples), static_cast<unsigned long long>(functions));
  if (fp.unsymbolized) {
    std::fprintf(stderr, ", %llu in no function symbol", static_cast<unsigned long long>(fp.unsymbolized));
  }
  std::fprintf(stderr, "\n");
  std::string others;
  for (size_t i = 1; i < kSampleOutcomeCount; ++i) {
    auto o2 = static_cast<SampleOutcome>(i);
    if (o2 == SampleOutcome::NoSymbol || t.outcomes[o2] == 0) continue;
    others += "  " + std::string(outcome_name(o2)) + " " + std::to_string(t.outcomes[o2]);
  }
  if (!others.empty()) std::fprintf(stderr, "profcollect: not in the binary:%s\n", others.c_str());
}

}  // namespace

std::vector<OutputFormat> parse_formats(const std::string& list) {
  std::vector<OutputFormat> out;
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ',')) {
    OutputFormat f;
    if (name == "bolt") {
      f = OutputFormat::Bolt;
    } else if (name == "preagg") {
      f = OutputFormat::Preagg;
    } else if (name == "autofdo") {
      f = OutputFormat::Autofdo;
    } else if (name == "unsymbolized") {
      f = OutputFormat::Unsymbolized;
    } else {
      throw CliError("--format: unknown format '" + name + "' (bolt, preagg, autofdo, unsymbolized)", 2);
    }
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  if (out.empty()) throw CliError("--format: no format named", 2);
  return out;
}

namespace {

bool wants(const ConvertOptions& o, OutputFormat f) {
  return std::find(o.formats.begin(), o.formats.end(), f) != o.formats.end();
}

// Where each output goes: the -o file itself for one format, DIR/<name> for several.
std::string output_path(const ConvertOptions& o, const char* name_in_dir) {
  return o.formats.size() == 1 ? o.output : o.output + "/" + name_in_dir;
}

}  // namespace

int run_convert(const ConvertOptions& o) {
  if (o.perf_data.empty() == o.perf_script.empty()) {
    throw CliError("name the input: -p PERF.DATA or --perf-script FILE", 2);
  }
  const std::string& input = o.perf_script.empty() ? o.perf_data : o.perf_script;
  TargetBinary target = TargetBinary::load(o.binary, o.debug_dirs);
  if (target.segments.empty()) {
    throw CliError(o.binary + ": has no executable segment");
  }
  const bool autofdo = wants(o, OutputFormat::Autofdo) || wants(o, OutputFormat::Unsymbolized);
  if (o.formats.size() > 1) {
    std::error_code ec;
    std::filesystem::create_directories(o.output, ec);
    if (ec || !std::filesystem::is_directory(o.output)) {
      throw CliError(o.output + ": cannot create the output directory" + (ec ? ": " + ec.message() : std::string()));
    }
  }
  // Made before any work so that an unwritable destination fails at once; each is removed
  // unless its profile is complete.
  std::unique_ptr<AtomicFileWriter> bolt_out, preagg_out, autofdo_out, unsym_out, meta_out;
  if (wants(o, OutputFormat::Preagg)) preagg_out = std::make_unique<AtomicFileWriter>(output_path(o, "bolt.preagg"));
  if (wants(o, OutputFormat::Bolt)) bolt_out = std::make_unique<AtomicFileWriter>(output_path(o, "bolt.fdata"));
  if (wants(o, OutputFormat::Autofdo)) autofdo_out = std::make_unique<AtomicFileWriter>(output_path(o, "autofdo.prof"));
  if (wants(o, OutputFormat::Unsymbolized)) unsym_out = std::make_unique<AtomicFileWriter>(output_path(o, "autofdo.unsym"));
  if (o.formats.size() > 1) meta_out = std::make_unique<AtomicFileWriter>(o.output + "/meta.json");

  // AutoFDO needs the debug info; a binary without it still gets its BOLT profile, and the
  // error is reported after that.
  std::unique_ptr<AutofdoBinary> debug;
  std::string debug_error;
  if (autofdo) {
    try {
      AutofdoBinaryOptions ao;
      for (const auto& d : o.debug_dirs) ao.debug_dirs.insert(ao.debug_dirs.begin(), d);
      debug = AutofdoBinary::open(target.elf, ao);
    } catch (const DebugInfoError& e) {
      if (!bolt_out) throw CliError(std::string(e.what()));
      debug_error = e.what();
    }
  }

  std::unique_ptr<RecordSource> source;
  if (!o.perf_script.empty()) {
    source = PerfScriptReader::open(o.perf_script);
  } else {
    source = open_perf_data(o.perf_data);
  }
  BinaryMatcher matcher(o.binary, target.elf->build_id(), o.ignore_build_id,
                        recorded_build_ids(*source));
  std::optional<BranchStackCounter> branches;
  if (debug) branches.emplace(debug->instructions());
  std::optional<BranchProfile> bolt_branches;
  if ((bolt_out && !o.no_lbr) || preagg_out) bolt_branches.emplace(&target.symbols);
  ProcessTable processes;
  SampleTally tally;
  TallyOptions topt;
  topt.pid = o.pid;
  topt.progress = make_progress_reporter("reading " + input, o.quiet);
  try {
    tally_samples(*source, processes, topt,
                  TallyTarget{&matcher, &target.segments, branches ? &*branches : nullptr,
                              bolt_branches ? &*bolt_branches : nullptr}, tally);
  } catch (...) {
    finish_progress();
    throw;
  }
  finish_progress();

  FunctionProfile fp = FunctionProfile::build(tally.target_ips, target.symbols);
  tally.outcomes.counts[static_cast<size_t>(SampleOutcome::Mapped)] -= fp.unsymbolized;
  tally.outcomes.add(SampleOutcome::NoSymbol, fp.unsymbolized);

  if (tally.samples == 0) {
    throw CliError(input + ": holds no samples" +
                   (o.pid ? " of pid " + std::to_string(*o.pid) : std::string()));
  }
  if (tally.target_ips.empty()) {
    uint64_t mismatched = tally.outcomes[SampleOutcome::BuildIdMismatch];
    if (mismatched) {
      throw CliError(input + ": " + std::to_string(mismatched) + " samples are in a file named " +
                     o.binary + " whose build-id differs from the binary's (" +
                     target.elf->build_id().to_hex() +
                     "); pass --ignore-build-id to use them anyway");
    }
    throw CliError(input + ": none of its " + std::to_string(tally.samples) +
                   " samples is in " + o.binary + " (build-id " +
                   (target.elf->build_id().empty() ? std::string("none") : target.elf->build_id().to_hex()) +
                   "): profiled another binary?");
  }

  std::vector<std::string> events;
  for (size_t i = 0; i < tally.per_attr.size() && i < source->session().attrs.size(); ++i) {
    if (tally.per_attr[i]) events.push_back(source->session().attrs[i].name);
  }
  const bool has_stacks = bolt_branches && bolt_branches->stats().stacks > 0;
  if (bolt_out) {
    if (has_stacks && !o.no_lbr) {
      BoltBlockMap blocks(*target.elf);
      FdataBranchWriter writer(target.symbols, blocks);
      bolt_out->write(writer.write(*bolt_branches));
    } else {
      bolt_out->write(FdataWriter::no_lbr(fp, events));
    }
    bolt_out->commit();
  }
  if (preagg_out) {
    if (!has_stacks) throw CliError(input + ": has no branch stacks: --format preagg needs branch samples");
    preagg_out->write(PreaggWriter::write(*bolt_branches));
    preagg_out->commit();
  }
  // Branch stacks, when the input has them, are what AutoFDO wants; else the IP samples.
  const bool from_branches = branches && branches->stats().stacks > 0;
  UnsymbolizedKind unsym_kind = from_branches ? UnsymbolizedKind::BranchRanges : UnsymbolizedKind::IpSamples;
  if (debug) {
    AutofdoStats stats;
    if (autofdo_out) {
      autofdo_out->write(from_branches ? write_autofdo_from_ranges(branches->profile(), *debug, &stats)
                                       : write_autofdo_from_ips(tally.target_ips, *debug, &stats));
      autofdo_out->commit();
    }
    if (unsym_out) {
      unsym_out->write(write_unsymbolized_profile(
          from_branches ? branches->profile() : ranges_from_ips(tally.target_ips), debug->preferred_base()));
      unsym_out->commit();
    }
  }
  if (meta_out) {
    nlohmann::ordered_json meta;
    meta["path"] = o.binary;
    meta["build_id"] = target.elf->build_id().to_hex();
    meta["samples"] = tally.outcomes[SampleOutcome::Mapped];
    meta["event"] = events.empty() ? std::string() : events.front();
    meta["input"] = input;
    if (unsym_out && debug) {
      meta["unsymbolized"] = unsymbolized_kind_name(unsym_kind);
      meta["unsymbolized_profgen_flags"] = unsymbolized_profgen_flags(unsym_kind);
    }
    meta_out->write(json_text(meta) + "\n");
    meta_out->commit();
  }
  if (!o.quiet) {
    print_summary(o, tally, fp, fp.totals().size());
    std::fprintf(stderr, "profcollect: wrote %s\n", o.output.c_str());
    if (unsym_out && debug && o.formats.size() == 1) {
      std::fprintf(stderr, "profcollect: read it back with llvm-profgen --unsymbolized-profile %s %s\n",
                   o.output.c_str(), unsymbolized_profgen_flags(unsym_kind));
    }
  }
  if (!debug_error.empty()) throw CliError(debug_error + " (the BOLT profile was written)");
  return 0;
}

}  // namespace profcollect
