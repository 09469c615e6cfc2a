#include "mapper/image_resolver.h"

#include <algorithm>
#include <optional>

namespace profcollect {

namespace {

// What a sample in a mapped file nobody profiles counts as.
SampleOutcome unselected_outcome(ImageKind kind) {
  switch (kind) {
    case ImageKind::Kernel:
    case ImageKind::KernelModule:
      return SampleOutcome::Kernel;
    case ImageKind::Anonymous:
      return SampleOutcome::AnonOrJit;
    case ImageKind::UserFile:
    case ImageKind::Special:
      break;
  }
  return SampleOutcome::OtherBinary;
}

}  // namespace

int32_t ImageResolver::slot_of(const ImageChoice& choice, uint32_t pid, const Mapping& m) {
  if (!choice.provisional) {
    // Several mapped files may be one image (another path to the same file, a record with and
    // without build-id): they share its slot.
    const std::string key = choice.image->identity().directory_name();
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].image && !slots_[i].provisional &&
          slots_[i].image->identity().directory_name() == key) {
        return static_cast<int32_t>(i);
      }
    }
  }
  // A released slot is reused, so that a long run with ever new images stays bounded.
  size_t free_slot = slots_.size();
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].image && !slots_[i].provisional) {
      free_slot = i;
      break;
    }
  }
  Slot s;
  s.image = choice.image;
  s.provisional = choice.provisional;
  s.pid = pid;
  s.dso = m.dso;
  s.mapping = m;
  if (free_slot == slots_.size()) {
    slots_.push_back(std::move(s));
  } else {
    slots_[free_slot] = std::move(s);
  }
  return static_cast<int32_t>(free_slot);
}

int32_t ImageResolver::apply(const ImageChoice& choice, uint32_t pid, const Mapping& m,
                             const Dso& dso) {
  switch (choice.verdict) {
    case ImageChoice::Verdict::NotSelected:
      return kNotSelected;
    case ImageChoice::Verdict::Unreadable:
      warnings_.push_back({"unreadable_binary", dso.path, choice.why});
      return kUnreadable;
    case ImageChoice::Verdict::BuildIdMismatch:
      if (!choice.why.empty()) {
        warnings_.push_back({"build_id_mismatch", dso.path, choice.why});
      }
      return kMismatch;
    case ImageChoice::Verdict::Selected:
      // An image translates only mappings of its own kind (a vmlinux is no user file).
      if (choice.image->kind() != classify_image(dso)) return kNotSelected;
      return slot_of(choice, pid, m);
  }
  return kNotSelected;
}

int32_t ImageResolver::route(uint32_t pid, const Mapping& m, const Dso& dso) {
  if (m.dso >= routes_.size()) routes_.resize(m.dso + 1, kUndecided);
  int32_t& r = routes_[m.dso];
  if (r != kUndecided) return r;
  // Anonymous and JIT memory and the kernel's special user mappings have no image file.
  const ImageKind kind = classify_image(dso);
  if (kind == ImageKind::Anonymous || kind == ImageKind::Special) return r = kNotSelected;
  return r = apply(selector_.choose(pid, m, dso), pid, m, dso);
}

ResolvedAddress ImageResolver::resolve(const ProcessTable& processes, uint32_t pid, uint64_t addr,
                                       CpuMode mode) {
  RunOf unused;
  return lookup(processes, pid, addr, mode, unused);
}

ResolvedAddress ImageResolver::resolve_and_remember(const ProcessTable& processes, uint32_t pid,
                                                    uint64_t addr, CpuMode mode,
                                                    ResolveMemo& memo) {
  RunOf run;
  const ResolvedAddress out = lookup(processes, pid, addr, mode, run);
  if (run.begin < run.end) {
    memo.entries_[memo.next_] = ResolveMemo::Entry{pid, mode, run, out};
    memo.next_ = (memo.next_ + 1) % ResolveMemo::kEntries;
    memo.size_ = std::min(memo.size_ + 1, ResolveMemo::kEntries);
  }
  return out;
}

ResolvedAddress ImageResolver::lookup(const ProcessTable& processes, uint32_t pid, uint64_t addr,
                                      CpuMode mode, RunOf& run) {
  ResolvedAddress out;
  const Mapping* m = processes.find(pid, addr, mode);
  if (!m) {
    out.outcome = (mode == CpuMode::Kernel || mode == CpuMode::GuestKernel)
                      ? SampleOutcome::Kernel
                      : SampleOutcome::NoMapping;
    return out;
  }
  out.dso = m->dso;
  const Dso& dso = processes.dso(m->dso);
  const int32_t r = route(pid, *m, dso);
  if (r >= 0) {
    const std::optional<ImageTranslator::Run> in_image =
        slots_[r].image->translator().translate_run(*m, dso, addr);
    if (!in_image) {
      out.outcome = SampleOutcome::NotExecutable;
      return out;
    }
    out.outcome = SampleOutcome::Mapped;
    out.image = r;
    out.vaddr = addr + in_image->delta;
    out.section = in_image->section;
    run = RunOf{in_image->begin, in_image->end, in_image->delta};
    return out;
  }
  switch (r) {
    case kUnreadable:
      out.outcome = SampleOutcome::UnreadableBinary;
      break;
    case kMismatch:
      out.outcome = SampleOutcome::BuildIdMismatch;
      break;
    default:
      out.outcome = unselected_outcome(classify_image(dso));
      break;
  }
  run = RunOf{m->start, m->end, 0};  // the whole mapping has the outcome
  return out;
}

std::vector<ImageRevision> ImageResolver::reconsider(const ProcessTable& processes) {
  std::vector<ImageRevision> revisions;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].provisional || !slots_[i].image) continue;
    const Slot s = slots_[i];
    ImageChoice choice = selector_.choose(s.pid, s.mapping, processes.dso(s.dso));
    if (choice.verdict == ImageChoice::Verdict::Selected && choice.provisional) continue;
    ImageRevision rev;
    rev.slot = static_cast<int32_t>(i);
    const int32_t now = apply(choice, s.pid, s.mapping, processes.dso(s.dso));
    if (now >= 0) {
      rev.into = now;
    } else {
      rev.outcome = now == kUnreadable ? SampleOutcome::UnreadableBinary
                    : now == kMismatch ? SampleOutcome::BuildIdMismatch
                                       : unselected_outcome(classify_image(processes.dso(s.dso)));
    }
    for (int32_t& route : routes_) {
      if (route == rev.slot) route = now;
    }
    slots_[i].image.reset();
    slots_[i].provisional = false;
    revisions.push_back(rev);
  }
  return revisions;
}

std::vector<int32_t> ImageResolver::forget(const std::vector<uint32_t>& dso_indices) {
  for (uint32_t d : dso_indices) {
    if (d < routes_.size()) routes_[d] = kUndecided;
  }
  std::vector<bool> used(slots_.size(), false);
  for (int32_t r : routes_) {
    if (r >= 0) used[r] = true;
  }
  std::vector<int32_t> released;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!used[i] && slots_[i].image) {
      slots_[i].image.reset();
      released.push_back(static_cast<int32_t>(i));
    }
  }
  return released;
}

std::vector<ImageWarning> ImageResolver::take_warnings() {
  std::vector<ImageWarning> w;
  w.swap(warnings_);
  for (const Slot& s : slots_) {
    if (!s.image) continue;
    for (auto& m : s.image->take_warnings()) w.push_back(std::move(m));
  }
  return w;
}

}  // namespace profcollect
