#include "collector/doctor/machine_facts.h"

#if PROFCOLLECT_WITH_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#endif
#include <unistd.h>
#include <sys/utsname.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "collector/kernel/kernel_image_locator.h"
#include "collector/host/online_cpus.h"
#include "collector/host/proc_files.h"
#include "mapper/debug_file_locator.h"
#include "mapper/elf_binary.h"

namespace profcollect {
namespace {

std::optional<int> read_int(const SystemFiles& files, const std::string& path) {
  const std::optional<std::string> text = files.read(path);
  if (!text || text->empty()) return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(text->c_str(), &end, 10);
  if (end == text->c_str()) return std::nullopt;
  return static_cast<int>(v);
}

// Whether /proc/kallsyms gives this process real addresses: the kernel prints zeros to a reader
// it does not trust (kallsyms_show_value), so one non-zero address of a text symbol decides.
bool kallsyms_shows_addresses() {
  std::ifstream in("/proc/kallsyms");
  std::string addr, type;
  for (int i = 0; i < 64 && in >> addr >> type; ++i) {
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    if (addr.find_first_not_of('0') != std::string::npos) return true;
  }
  return false;
}

bool has_debug_info(const ElfBinary& elf) {
  const ElfSection* s = elf.section_by_name(".debug_info");
  return s != nullptr && s->size > 0;
}

// modules.dep lines: "kernel/fs/fuse/fuse.ko: dep.ko ..."; name -> path relative to the dir.
std::map<std::string, std::string> module_files(const SystemFiles& files,
                                                const std::string& modules_dir) {
  std::map<std::string, std::string> out;
  const std::optional<std::string> dep = files.read(modules_dir + "/modules.dep");
  if (!dep) return out;
  std::istringstream in(*dep);
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string path = line.substr(0, colon);
    std::string name = path.substr(path.rfind('/') + 1);
    name = name.substr(0, name.find('.'));
    for (char& c : name)
      if (c == '-') c = '_';
    out.emplace(name, path);
  }
  return out;
}

VmlinuxFact vmlinux_fact() {
  VmlinuxFact v;
  try {
    const KernelImage image = locate_kernel_image(KernelImageSettings{});
    if (image.running) v.running_build_id = image.running->to_hex();
    v.path = image.path;
    if (!image.build_id.empty()) v.build_id = image.build_id.to_hex();
    v.looked_at = image.notes;
    if (!v.path.empty()) v.has_debug_info = has_debug_info(*ElfBinary::open(v.path));
  } catch (const std::exception& e) {
    v.error = e.what();
  }
  return v;
}

}  // namespace

std::optional<std::vector<ModuleDebugFact>> module_debug_facts(const SystemFiles& files,
                                                               const std::string& modules_dir) {
  const std::optional<std::string> loaded = files.read("/proc/modules");
  if (!loaded) return std::nullopt;
  const std::map<std::string, std::string> known = module_files(files, modules_dir);
  std::vector<ModuleDebugFact> out;
  std::istringstream in(*loaded);
  for (std::string line; std::getline(in, line);) {
    ModuleDebugFact m;
    m.name = line.substr(0, line.find(' '));
    if (m.name.empty()) continue;
    if (auto it = known.find(m.name); it != known.end()) {
      m.file = modules_dir + "/" + it->second;
      try {
        const std::shared_ptr<const ElfBinary> ko = ElfBinary::open(m.file);
        if (has_debug_info(*ko)) {
          m.debug_file = m.file;
        } else if (auto d = locate_debug_file(*ko, {"/usr/lib/debug"}, has_debug_info)) {
          m.debug_file = d->elf->path();
        } else {
          // Debian's -dbg packages keep the module's own path under /usr/lib/debug.
          const std::string beside = "/usr/lib/debug" + m.file;
          try {
            if (has_debug_info(*ElfBinary::open(beside))) m.debug_file = beside;
          } catch (const std::exception&) {
          }
        }
      } catch (const std::exception&) {
        // A compressed (.ko.xz, .ko.zst) or unreadable module: no debug info that can be used.
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

int probe_bpf_perf_event_program() {
#if !PROFCOLLECT_WITH_BPF
  return kBpfNotBuilt;
#else
  // The smallest perf_event program ("r0 = 0; exit"), loaded through libbpf's bpf_prog_load,
  // which returns -errno: libbpf_probe_bpf_prog_type() says 0 for a refusal (EPERM) as for a
  // kernel without the program type, and doctor must tell them apart.
  const bpf_insn program[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .src_reg = 0, .off = 0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
  };
  const libbpf_print_fn_t old = libbpf_set_print(nullptr);
  const int fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, nullptr, "GPL", program, 2, nullptr);
  libbpf_set_print(old);
  if (fd >= 0) {
    ::close(fd);
    return 1;
  }
  // EINVAL: the kernel does not know the program type.
  return fd == -EINVAL ? 0 : fd;
#endif
}

std::optional<std::string> first_line_of_version(const std::string& tool) {
  const std::string command = tool + " --version 2>/dev/null";
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return std::nullopt;
  char buffer[512];
  std::string line;
  if (std::fgets(buffer, sizeof buffer, p) != nullptr) line = buffer;
  while (std::fgets(buffer, sizeof buffer, p) != nullptr) {
  }
  const int status = ::pclose(p);
  if (status != 0 || line.empty()) return std::nullopt;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

MachineFacts gather_machine_facts(const MachineProbes& probes) {
  MachineFacts f;
  struct utsname u {};
  if (::uname(&u) == 0) {
    f.kernel_release = u.release;
    f.machine = u.machine;
  }
  f.cpu = probe_cpu_capabilities(probes.files);
  f.permissions = PerfPermissions::of_this_process();
  if (auto p = read_int(probes.files, "/proc/sys/kernel/perf_event_paranoid"))
    f.permissions.paranoid = *p;
  const bool kernel = f.permissions.may_sample_kernel();
  const SamplingRate rate;  // perf's default frequency
  f.cycles_open_errno = probes.perf_open(make_probe_attr(SamplingEngine::Cycles, rate, kernel));
  if (f.cpu.brs) {
    f.branch_open_errno =
        probes.perf_open(make_probe_attr(SamplingEngine::Brs, {false, kDefaultBrsPeriod}, kernel));
  } else if (f.cpu.branch_stack != BranchHardware::None) {
    f.branch_open_errno =
        probes.perf_open(make_probe_attr(SamplingEngine::BranchStack, rate, kernel));
  }
  for (const std::string& d : probes.files.list(kEventSourceDevices))
    if (d.rfind("arm_spe_", 0) == 0) f.spe_pmus.push_back(d);
  f.kptr_restrict = read_int(probes.files, "/proc/sys/kernel/kptr_restrict");
  f.kallsyms_addresses_visible = kallsyms_shows_addresses();
  f.unprivileged_bpf_disabled =
      read_int(probes.files, "/proc/sys/kernel/unprivileged_bpf_disabled");
  f.bpf_perf_event_probe = probes.bpf_probe ? probes.bpf_probe() : 0;
  for (const std::string& name : probes.files.list("/sys/kernel/btf"))
    if (name == "vmlinux") f.btf_present = true;
  f.lock_budget = LockBudget::of_this_process(f.permissions);
  if (probes.tool_version) f.strip_version = probes.tool_version("strip").value_or("");
  f.modules = module_debug_facts(probes.files, "/lib/modules/" + f.kernel_release);
  f.vmlinux = vmlinux_fact();
  return f;
}

}  // namespace profcollect
