// profcollect's command line. Each subcommand is a thin layer over the libraries; this file only
// parses arguments and turns errors into one-line messages and exit codes:
//   0 success, 1 failure (bad input, unwritable output, ...), 2 usage error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "collector/cli/cli_error.h"
#include "collector/cli/cli_spelling.h"
#include "collector/cli/number_options.h"
#include "collector/cli/option_suggestion.h"
#include "collector/cli/perf2bolt_dialect.h"
#include "collector/cli/collect_command.h"
#include "collector/cli/convert_command.h"
#include "collector/cli/ctl_command.h"
#include "collector/cli/daemon_command.h"
#include "collector/cli/doctor_command.h"
#include "collector/cli/kernel_command.h"
#include "collector/cli/merge_command.h"
#include "collector/cli/report_command.h"
#include "output/profile_format.h"
#include "collector/live/event_selection.h"
#include "collector/host/mmap_budget.h"
#include "collector/live/perf_event_error.h"
#include "collector/records/record_source.h"
#include "mapper/elf_binary.h"
#include "output/atomic_file.h"

namespace {

constexpr const char* kVersion = "0.1.0";

// perf2bolt spells some long options with one dash (-nl) and gives values after '=' (-p=FILE,
// -o=FILE); CLI11 wants two dashes and a separate value. Rewrite them before parsing so users can
// switch tools by changing one word: convert's arguments in perf2bolt's dialect
// (perf2bolt_dialect.h), a short option's value after '=' anywhere. The command after "--" is
// not touched.
std::vector<std::string> normalize_args(const std::vector<std::string>& in,
                                        std::optional<std::string>& unknown) {
  std::vector<std::string> dialect = in;
  // The subcommand is the first word that is not an option.
  const auto sub =
      std::find_if(in.begin(), in.end(), [](const std::string& a) { return !a.starts_with("-"); });
  if (sub != in.end() && *sub == "convert") {
    profcollect::Perf2boltRewrite rewritten =
        profcollect::from_perf2bolt_dialect(std::vector<std::string>(sub + 1, in.end()));
    unknown = rewritten.unknown;
    dialect.assign(in.begin(), sub + 1);
    dialect.insert(dialect.end(), rewritten.args.begin(), rewritten.args.end());
  }
  std::vector<std::string> args;
  for (const std::string& a : dialect) {
    if (a == "-nl") {
      args.push_back("--nl");
    } else if (a == "-ignore-build-id") {
      args.push_back("--ignore-build-id");
    } else if (a.size() > 3 && a[0] == '-' && std::isalpha(static_cast<unsigned char>(a[1])) &&
               a[2] == '=') {
      args.push_back(a.substr(0, 2));
      args.push_back(a.substr(3));
    } else {
      args.push_back(a);
    }
  }
  return args;
}

// A usage error is one line; an unknown option gets the nearest known one as a suggestion.
int usage_error(CLI::App& app, const std::string& what, bool extras,
                const std::vector<std::string>& args) {
  std::string message = what;
  if (extras) {
    for (const std::string& a : args) {
      if (a.size() < 2 || a[0] != '-' || a == "-") continue;
      const std::string name = a.substr(0, a.find('='));
      if (profcollect::is_known_option(app, name)) continue;
      if (auto near = profcollect::nearest_option(app, name)) {
        message += " (did you mean " + *near + "?)";
        break;
      }
    }
  }
  std::fprintf(stderr, "profcollect: error: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace profcollect;
  CLI::App app{
      "profcollect: collect and convert CPU profiles for BOLT and AutoFDO.\n"
      "Samples are mapped to binaries by the executable segment that holds them, never by a "
      "heuristic.",
      "profcollect"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(0, 1);

  // Each value is shown by its name (HZ, FILE, DIR), never by CLI11's type tags (UINT, TEXT) or
  // its validators' descriptions: type_name() on every option that takes one; positionals by
  // their own name only.
  CollectOptions collect;
  std::string pid_list;
  app.add_option("-p,--pid", pid_list, "processes to profile (all their threads and children)")
      ->type_name("PID[,PID...]");
  app.add_flag("-a,--all-cpus", collect.system_wide, "profile every process");
  app.add_option(
         "-e,--event", collect.event,
         "auto, lbr, brs, spe (Arm SPE), cycles, cpu-clock, or a raw event rHEX; perf's modifiers "
         "u and k (cycles:u, cpu-clock:k), and p, pp, ppp on a raw event (r20c4:k)")
      ->type_name("EVENT")
      ->capture_default_str();
  app.add_option(
         "--engine", collect.engine,
         "perf (ring buffers), bpf (samples counted in the kernel by a BPF program), or auto "
         "(bpf where the kernel and capabilities allow it, else perf)")
      ->type_name("ENGINE")
      ->check(CLI::IsMember({"perf", "bpf", "auto"}).description(""))
      ->capture_default_str();
  // perf's branch stack request.
  auto* any_branch_flag = app.add_flag("-b,--branch-any", collect.branch_any,
                                       "sample taken-branch stacks (perf's -b = -j any)");
  app.add_option("-j,--branch-filter", collect.branch_filter,
                 "branch stack filter: any[,u][,k] (perf's -j)")
      ->type_name("FILTER")
      ->excludes(any_branch_flag);
  app.add_option("-F,--freq", collect.frequency,
                 "samples per second (default 4000), or max: the kernel's limit "
                 "(kernel.perf_event_max_sample_rate)")
      ->type_name("HZ|max")
      ->transform(frequency_word_max(kMaxFrequency))
      ->check(whole_number(1, kMaxFrequency));
  app.add_option("-c,--count", collect.period, "events per sample, instead of -F")
      ->type_name("N")
      ->check(whole_number(1, kMaxPeriod));
  app.add_option("-m,--mmap-pages", collect.mmap_pages,
                 "data pages per ring buffer, a power of two (default: what fits the lock limit)")
      ->type_name("PAGES")
      ->check(power_of_two(1, kMaxMmapPages));
  app.add_option(
         "--backlog-mb", collect.backlog_mb,
         "MiB the drain thread may hold for the collector while it is busy (samples past it are "
         "counted lost: backlog_full)")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(whole_number(kMinBacklogMb, kMaxBacklogMb));
  app.add_option("-o,--output", collect.output_dir, "output directory")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_option("--flush-interval", collect.flush_interval, "seconds between flushes")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(seconds(kMinSeconds, kMaxSeconds));
  app.add_option("--duration", collect.duration, "stop after this many seconds")
      ->type_name("SECONDS")
      ->check(seconds(kMinSeconds, kMaxSeconds));
  app.add_option("--binary", collect.binaries,
                 "profile only this binary (path as mapped, or build-id); repeatable")
      ->type_name("PATH|BUILD-ID");
  app.add_option("--debug-dir", collect.debug_dirs, "directory searched for separate debug info")
      ->type_name("DIR");
  app.add_option(
         "--format", collect.formats,
         format_names() +
             ", joined by commas: the profiles written per binary (default: the live "
             "defaults, " +
             [] {
               std::string names;
               for (ProfileFormat f : live_default_formats())
                 names += (names.empty() ? "" : ",") + std::string(f->name);
               return names;
             }() +
             ")")
      ->type_name("FORMAT[,FORMAT...]");
  app.add_flag("--unsymbolized", collect.unsymbolized,
               "also write autofdo.unsym (llvm-profgen's unsymbolized profile) per binary");
  app.add_flag("-q,--quiet", collect.quiet, "print nothing but errors");

  ConvertOptions convert;
  auto* c = app.add_subcommand(
      "convert",
      "Convert a perf.data into a BOLT profile for BINARY (perf2bolt's job). perf2bolt's "
      "spellings are taken too: -perfdata=FILE, -nl, -ba, -ignore-build-id, -pid=N.");
  c->add_option("-p,--perfdata", convert.perf_data,
                "perf.data to read (a file, a `perf record "
                "--threads` directory, or - for a pipe)")
      ->type_name("FILE");
  c->add_option("--perf-script", convert.perf_script,
                "read `perf script -F ip,brstack --show-mmap-events` text instead of a perf.data")
      ->type_name("FILE");
  std::string format_list = "bolt";
  c->add_option(
       "--format", format_list,
       format_names() +
           ", or several joined by commas (then -o is a directory, as for propeller's two files)")
      ->type_name("FORMAT[,FORMAT...]")
      ->capture_default_str();
  c->add_option(
       "-o,--output", convert.output,
       "profile to write (replaced atomically); a directory when several formats or propeller")
      ->type_name("FILE")
      ->required();
  c->add_flag(
      "--nl", convert.no_lbr,
      "BOLT no_lbr profile from IP samples even when the input has branch stacks; also -nl, -ba");
  c->add_option("--pid", convert.pid, "only samples of this process")
      ->type_name("PID")
      ->check(whole_number(1, kMaxPid));
  c->add_flag("--ignore-build-id", convert.ignore_build_id,
              "use samples of a file of BINARY's name even if its build-id differs");
  c->add_option("--debug-dir", convert.debug_dirs,
                "directory searched for separate debug info (.build-id/xx/yyyy.debug); repeatable")
      ->type_name("DIR");
  c->add_flag(
      "--kernel", convert.kernel,
      "BINARY is the kernel (vmlinux, as llvm-profgen --kernel) or a kernel module (.ko): refuse "
      "anything else; a kernel image given without it is converted the same way");
  c->add_flag("-q,--quiet", convert.quiet, "print nothing but errors");
  c->add_option(
       "BINARY", convert.binary,
       "the executable, shared library, kernel image (vmlinux) or kernel module (.ko) profiled")
      ->type_name("")
      ->required();

  ReportOptions report;
  auto* r = app.add_subcommand("report",
                               "Summarize a perf.data (samples, losses, per-file counts, "
                               "and with BINARY its mapping and top functions) or a "
                               "live collection's output directory.");
  r->add_option("INPUT", report.input, "perf.data, or an output directory of live collection")
      ->type_name("")
      ->required();
  r->add_option("BINARY", report.binary, "binary to map the samples to")->type_name("");
  r->add_flag("--json", report.json, "print JSON (one schema for both inputs)");
  r->add_option("--pid", report.pid, "only samples of this process")
      ->type_name("PID")
      ->check(whole_number(1, kMaxPid));
  r->add_flag("--ignore-build-id", report.ignore_build_id, "as for convert");
  r->add_option("--debug-dir", report.debug_dirs, "as for convert")->type_name("DIR");
  r->add_option("--top", report.top, "number of functions listed")
      ->type_name("N")
      ->capture_default_str()
      ->check(whole_number(0, kMaxTop));
  r->add_flag("-q,--quiet", report.quiet, "no progress display");

  std::string daemon_config = kDefaultDaemonConfig;
  auto* d = app.add_subcommand("daemon",
                               "Run the collection daemon: every process, profiles flushed into "
                               "output_dir, a control socket (see `profcollect ctl`).");
  d->add_option("--config", daemon_config, "configuration file (TOML)")
      ->type_name("FILE")
      ->capture_default_str();
  std::string check_config;
  auto* check =
      d->add_option(
           "--check-config", check_config,
           "check the configuration (FILE, else --config's), print it in effect, exit 0 or 1")
          ->type_name("[FILE]")
          ->expected(0, 1);

  CtlOptions ctl;
  auto* k =
      app.add_subcommand("ctl", "Send one request to the running daemon and print its reply.");
  k->add_option("--socket", ctl.socket, "the daemon's control socket")
      ->type_name("PATH")
      ->capture_default_str();
  k->add_option("COMMAND", ctl.command, "status, flush, reload, or kernel --duration S")
      ->type_name("")
      ->required()
      ->check(CLI::IsMember({"status", "flush", "reload", "kernel"}).description(""));
  k->add_option("--duration", ctl.duration, "seconds of kernel profile (kernel)")
      ->type_name("SECONDS")
      ->check(seconds(kMinSeconds, kMaxSeconds));
  k->add_flag("--json", ctl.json,
              "print the daemon's reply as JSON (default: a summary for people)");
  k->add_option("--timeout", ctl.timeout,
                "give up when the daemon has not answered after this many seconds "
                "(default: 120 for flush, 30 otherwise; kernel: after its duration and this)")
      ->type_name("SECONDS")
      ->check(seconds(kMinSeconds, kMaxSeconds));

  KernelOptions kernel;
  auto* kc = app.add_subcommand(
      "kernel",
      "Profile the kernel of the whole machine for --duration seconds (kernel-only samples, branch "
      "stacks where the CPU has them): an AutoFDO profile with a vmlinux of the running kernel, "
      "else llvm-profgen's unsymbolized profile and samples per function from /proc/kallsyms.");
  kc->add_option("--duration", kernel.duration, "seconds to collect")
      ->type_name("SECONDS")
      ->required()
      ->check(seconds(kMinSeconds, kMaxSeconds));
  kc->add_option("--vmlinux", kernel.vmlinux,
                 "the running kernel's vmlinux (default: looked for in /usr/lib/debug/boot, "
                 "/lib/modules/RELEASE/build, /boot)")
      ->type_name("FILE");
  kc->add_option(
        "--modules", kernel.modules_dir,
        "directory searched for the loaded modules' .ko files (default: /lib/modules/RELEASE)")
      ->type_name("DIR");
  kc->add_option("-o,--output", kernel.output_dir, "output directory")
      ->type_name("DIR")
      ->capture_default_str();
  kc->add_option("--format", kernel.formats,
                 format_names(/*kernel=*/true) +
                     ", joined by commas (default: autofdo,unsymbolized; without a "
                     "vmlinux only the unsymbolized profile and the function summary)")
      ->type_name("FORMAT[,FORMAT...]");
  kc->add_option("-F,--freq", kernel.frequency,
                 "samples per second (cycles, cpu-clock), or max: the kernel's limit")
      ->type_name("HZ|max")
      ->transform(frequency_word_max(kMaxFrequency))
      ->check(whole_number(1, kMaxFrequency));
  kc->add_option("-c,--count", kernel.period,
                 "events per sample (default for taken branches: 500009)")
      ->type_name("N")
      ->check(whole_number(1, kMaxPeriod));
  kc->add_option("-m,--mmap-pages", kernel.mmap_pages, "data pages per ring buffer, a power of two")
      ->type_name("PAGES")
      ->check(power_of_two(1, kMaxMmapPages));
  kc->add_option("--debug-dir", kernel.debug_dirs, "directory searched for separate debug info")
      ->type_name("DIR");
  kc->add_option("--kernel-notes", kernel.notes_path, "")
      ->group("");  // tests: a notes file of their own
  kc->add_flag("-q,--quiet", kernel.quiet, "print nothing but errors");

  MergeOptions merge;
  auto* m = app.add_subcommand(
      "merge",
      "Merge the output directories of many hosts into one: a profile per binary (basename and "
      "build-id), every format added up as its own tools do (BOLT's merge-fdata, llvm-profdata "
      "merge --sample); meta.json samples summed and time range widened. The binaries are not "
      "needed, but for bolt.inferred.preagg and the propeller files, made again from the summed "
      "samples with the binary at meta.json's path when it is still that build. OUT's directories "
      "of the "
      "binaries merged are replaced, each as a whole; give OUT as an input too to add to it.");
  m->add_option("-o,--output", merge.output, "directory to write the merged profiles into")
      ->type_name("OUT")
      ->required();
  m->add_option("DIR", merge.inputs, "output directories of live collection (one per host)")
      ->type_name("")
      ->required();
  m->add_flag("-q,--quiet", merge.quiet, "print nothing but errors and warnings");

  DoctorOptions doctor;
  auto* doc = app.add_subcommand(
      "doctor",
      "Say what this machine lets profcollect do and what stands in the way, each with its fix: "
      "PMU, branch-stack hardware (LBR, BRS, BRBE), Arm SPE, perf_event_paranoid, kptr_restrict, "
      "capabilities, BPF and BTF, the ring-buffer lock budget, the kernel's vmlinux, module debug "
      "info, toolchain hazards for AutoFDO kernels. Exit status 0 whenever the report is made.");
  doc->add_flag("--json", doctor.json,
                "print the report as JSON (id, status, detail, fix per check)");

  // Set after the subcommands, which would copy it: it describes the top level's options only.
  app.footer(
      "Live collection (no subcommand):\n"
      "  profcollect [options] -p PID[,PID...]   attach to running processes (also --pid)\n"
      "  profcollect [options] -a                every process\n"
      "  profcollect [options] -- CMD [ARGS...]  run CMD and profile it; exits with its status\n"
      "Profiles go to DIR/<binary>-<build-id>/{bolt.fdata,meta.json} and DIR/collection.json,\n"
      "flushed every --flush-interval seconds, on SIGHUP, and at the end (SIGINT/SIGTERM).");

  std::vector<std::string> args(argv + 1, argv + argc);
  // Everything after "--" is the command to run, untouched by option parsing.
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      collect.command.assign(args.begin() + i + 1, args.end());
      args.resize(i);
      break;
    }
  }
  std::optional<std::string> unknown;
  try {
    args = normalize_args(args, unknown);
  } catch (const CliError& e) {
    std::fprintf(stderr, "profcollect: error: %s\n", e.what());
    return e.exit_code();
  }
  // CLI11 would take it as a short option and a value (-perfdta=x as -p erfdta=x): refused.
  if (unknown) return usage_error(app, "unknown option " + *unknown, true, {*unknown});
  const std::vector<std::string> typed = args;
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e.what(), dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr, typed);
  }

  try {
    if (*c) {
      convert.formats = parse_formats(format_list);
      return run_convert(convert);
    }
    if (*r) return run_report(report);
    if (*d)
      return *check ? run_daemon_check(check_config.empty() ? daemon_config : check_config)
                    : run_daemon(daemon_config);
    if (*k) return run_ctl(ctl);
    if (*m) return run_merge(merge);
    if (*doc) return run_doctor(doctor);
    if (*kc) return run_kernel(kernel);
    if (!pid_list.empty()) {
      std::stringstream ss(pid_list);
      std::string item;
      while (std::getline(ss, item, ',')) {
        if (auto why = check_whole_number(item, 1, kMaxPid)) throw CliError("--pid: " + *why, 2);
        collect.pids.push_back(std::stoi(item));
      }
    }
    // Checked now, so that a bad -e, -b or -j is a usage error before anything starts.
    (void)parse_event_request(collect.event, collect.branch_any, collect.branch_filter);
    if (collect.pids.empty() && collect.command.empty() && !collect.system_wide) {
      std::fputs(app.help().c_str(), stderr);
      return 2;
    }
    return run_collect(collect);
  } catch (const CliError& e) {
    std::fprintf(stderr, "profcollect: error: %s\n", e.what());
    return e.exit_code();
  } catch (const EventSelectionError& e) {
    std::fprintf(stderr, "profcollect: error: %s\n", e.spelled(cli_flag_of).c_str());
    return 2;
  } catch (const SettingError& e) {  // PerfEventError, BufferSizeError
    std::fprintf(stderr, "profcollect: error: %s\n", e.spelled(cli_flag_of).c_str());
    return 1;
  } catch (const SourceError& e) {
    std::fprintf(stderr, "profcollect: error: %s\n", e.what());
    return 1;
  } catch (const OpenError& e) {
    std::fprintf(stderr, "profcollect: error: %s\n", e.what());
    return 1;
  } catch (const ElfError& e) {
    std::fprintf(stderr, "profcollect: error: %s\n", e.what());
    return 1;
  } catch (const OutputError& e) {
    std::fprintf(stderr, "profcollect: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "profcollect: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "profcollect: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
