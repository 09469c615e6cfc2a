#include "mapper/sample_resolver.h"

namespace profcollect {

ResolvedAddress SampleResolver::resolve(uint32_t pid, uint64_t addr, CpuMode mode) const {
  ResolvedAddress r;
  const Mapping* m = processes_.find(pid, addr, mode);
  if (!m) {
    r.outcome = (mode == CpuMode::Kernel || mode == CpuMode::GuestKernel) ? SampleOutcome::Kernel
                                                                          : SampleOutcome::NoMapping;
    return r;
  }
  r.mapping = m;
  switch (matcher_.match(m->dso, processes_.dso(m->dso))) {
    case DsoMatch::Kernel:
      r.outcome = SampleOutcome::Kernel;
      return r;
    case DsoMatch::Anon:
      r.outcome = SampleOutcome::AnonOrJit;
      return r;
    case DsoMatch::Other:
    case DsoMatch::Unknown:
      r.outcome = SampleOutcome::OtherBinary;
      return r;
    case DsoMatch::BuildIdMismatch:
      r.outcome = SampleOutcome::BuildIdMismatch;
      return r;
    case DsoMatch::Target:
      break;
  }
  if (!m->executable) {
    r.outcome = SampleOutcome::NotExecutable;
    return r;
  }
  auto vaddr = segments_.file_offset_to_vaddr(addr - m->start + m->pgoff);
  if (!vaddr) {
    r.outcome = SampleOutcome::NotExecutable;
    return r;
  }
  r.outcome = SampleOutcome::Mapped;
  r.vaddr = *vaddr;
  return r;
}

}  // namespace profcollect
