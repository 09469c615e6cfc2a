#include "collector/cli/convert_command.h"

#include <cstdio>

#include "collector/cli/cli_error.h"
#include "collector/cli/progress.h"
#include "collector/cli/sample_tally.h"
#include "collector/cli/target_binary.h"
#include "collector/perf_data_reader.h"
#include "output/atomic_file.h"
#include "output/fdata_writer.h"
#include "output/function_profile.h"

namespace profcollect {

namespace {

double percent(uint64_t part, uint64_t whole) { return whole ? 100.0 * part / whole : 0.0; }

void print_summary(const ConvertOptions& o, const SampleTally& t, const FunctionProfile& fp,
                   size_t functions) {
  std::fprintf(stderr, "profcollect: %s: %llu samples, %llu lost\n", o.perf_data.c_str(),
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

int run_convert(const ConvertOptions& o) {
  TargetBinary target = TargetBinary::load(o.binary, o.debug_dirs);
  if (target.segments.empty()) {
    throw CliError(o.binary + ": has no executable segment");
  }
  // Made before any work so that an unwritable destination fails at once; removed unless the
  // whole conversion succeeds.
  AtomicFileWriter out(o.output);

  std::unique_ptr<RecordSource> source = open_perf_data(o.perf_data);
  BinaryMatcher matcher(o.binary, target.elf->build_id(), o.ignore_build_id,
                        recorded_build_ids(*source));
  ProcessTable processes;
  SampleTally tally;
  TallyOptions topt;
  topt.pid = o.pid;
  topt.progress = make_progress_reporter("reading " + o.perf_data, o.quiet);
  try {
    tally_samples(*source, processes, topt, TallyTarget{&matcher, &target.segments}, tally);
  } catch (...) {
    finish_progress();
    throw;
  }
  finish_progress();

  FunctionProfile fp = FunctionProfile::build(tally.target_ips, target.symbols);
  tally.outcomes.counts[static_cast<size_t>(SampleOutcome::Mapped)] -= fp.unsymbolized;
  tally.outcomes.add(SampleOutcome::NoSymbol, fp.unsymbolized);

  if (tally.samples == 0) {
    throw CliError(o.perf_data + ": holds no samples" +
                   (o.pid ? " of pid " + std::to_string(*o.pid) : std::string()));
  }
  if (tally.target_ips.empty()) {
    uint64_t mismatched = tally.outcomes[SampleOutcome::BuildIdMismatch];
    if (mismatched) {
      throw CliError(o.perf_data + ": " + std::to_string(mismatched) + " samples are in a file named " +
                     o.binary + " whose build-id differs from the binary's (" +
                     target.elf->build_id().to_hex() +
                     "); pass --ignore-build-id to use them anyway");
    }
    throw CliError(o.perf_data + ": none of its " + std::to_string(tally.samples) +
                   " samples is in " + o.binary + " (build-id " +
                   (target.elf->build_id().empty() ? std::string("none") : target.elf->build_id().to_hex()) +
                   "): profiled another binary?");
  }

  std::vector<std::string> events;
  for (size_t i = 0; i < tally.per_attr.size() && i < source->session().attrs.size(); ++i) {
    if (tally.per_attr[i]) events.push_back(source->session().attrs[i].name);
  }
  std::string text = FdataWriter::no_lbr(fp, events);
  out.write(text);
  out.commit();
  if (!o.quiet) {
    print_summary(o, tally, fp, fp.totals().size());
    std::fprintf(stderr, "profcollect: wrote %s\n", o.output.c_str());
  }
  return 0;
}

}  // namespace profcollect
