#include "collector/kernel/kernel_layout_records.h"

#include "collector/host/setting_error.h"
#include "mapper/process_table.h"

namespace profcollect {

namespace {

MmapRecord kernel_mapping(std::string_view name, uint64_t start, uint64_t len, uint64_t pgoff) {
  MmapRecord r;
  r.pid = ProcessTable::kKernelPid;
  r.tid = 0;
  r.start = start;
  r.len = len;
  r.pgoff = pgoff;
  r.cpumode = CpuMode::Kernel;
  r.executable = true;
  r.filename = name;
  return r;
}

}  // namespace

KernelLayoutRecords::KernelLayoutRecords(const KallsymsTable& kallsyms,
                                         const std::vector<LoadedModule>& modules) {
  if (kallsyms.hidden)
    // The kernel's rule (kallsyms_show_value): with kptr_restrict 0 the addresses show when
    // perf_event_paranoid <= 1 or to CAP_SYSLOG, with 1 only to CAP_SYSLOG, with 2 to no one.
    throw SettingError(
        "{kallsyms} hides the kernel's addresses from this process: a kernel profile needs "
        "them (grant CAP_SYSLOG with kernel.kptr_restrict at most 1, or run as root; "
        "`profcollect doctor` says which applies)");
  const bool by_text = kallsyms.text.has_value();
  if (kallsyms.functions.empty() && !kallsyms.text && !kallsyms.stext)
    throw SettingError(
        "{kallsyms} lists no kernel symbol: empty or hidden from this process (a "
        "sandbox such as systemd's ProtectKernelTunables= makes /proc/kallsyms "
        "inaccessible)");
  if (!by_text && !kallsyms.stext) throw SettingError("{kallsyms} has neither _text nor _stext");
  text_ = by_text ? *kallsyms.text : *kallsyms.stext;
  // Up to _etext; without it, to the top of the address space, as perf maps the kernel.
  text_end_ = kallsyms.etext && *kallsyms.etext > text_ ? *kallsyms.etext : 0;
  names_.push_back(by_text ? "[kernel.kallsyms]_text" : "[kernel.kallsyms]_stext");
  records_.push_back(
      kernel_mapping(names_.back(), text_, text_end_ ? text_end_ - text_ : ~text_, text_));
  for (const LoadedModule& m : modules) {
    if (m.address == 0 || m.size == 0) continue;
    names_.push_back("[" + m.name + "]");
    records_.push_back(kernel_mapping(names_.back(), m.address, m.size, 0));
  }
}

}  // namespace profcollect
