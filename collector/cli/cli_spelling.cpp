#include "collector/cli/cli_spelling.h"

#include "collector/host/setting_error.h"

namespace profcollect {

std::string cli_flag_of(std::string_view setting) {
  if (setting == "event") return "-e";
  if (setting == "frequency") return "-F";
  if (setting == "period") return "-c";
  if (setting == "branch_any") return "-b";
  if (setting == "branch_filter") return "-j";
  if (setting == "mmap_pages") return "-m";
  if (setting == "backlog_mb") return "--backlog-mb";
  if (setting == "binaries") return "--binary";
  if (setting == "output_dir") return "-o";
  if (setting == "vmlinux") return "--vmlinux";
  if (setting == "engine") return "--engine";
  if (setting == "format") return "--format";
  return {};
}

std::string in_cli_terms(std::string_view message) { return spell_settings(message, cli_flag_of); }

}  // namespace profcollect
