// Address -> (image, address in the image, outcome), for every source and engine. The process
// table says which file is mapped at an address; the selector says whether that file gets a
// profile and opens it; the image's translator, chosen by its kind, turns the address into one
// in the image (mapper/image_translator.h: the exec-segment rule for a user ELF file, the
// `_text` slide for the kernel image, section bases for a module). User files, the kernel image
// and modules go to the selector; anonymous and special mappings, and whatever the selector
// leaves out, are counted by their outcome (a kernel image or module not selected: `kernel`).
//
// A decision is made once per mapped file (Dso) and then is a vector lookup. A decision the
// selector marks provisional (made before the file's build-id was known: in pipe mode the
// build-id table comes last) gets an image slot of its own until reconsider() confirms it,
// folds it into the confirmed image, or rejects it with the outcome its samples get instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mapper/image_kind.h"
#include "mapper/loaded_image.h"
#include "mapper/process_table.h"
#include "record/record.h"
#include "record/sample_outcome.h"

namespace profcollect {

struct ImageChoice {
  enum class Verdict : uint8_t { NotSelected, Selected, Unreadable, BuildIdMismatch };
  Verdict verdict = Verdict::NotSelected;
  std::shared_ptr<LoadedImage> image;  // when Selected
  std::string why;                     // when Unreadable or BuildIdMismatch, said once
  bool provisional = false;            // may change once the file's build-id is known
};

// Decides which mapped files get profiles and opens them (convert: one target binary; live
// collection: the binaries a selection names, read through /proc).
class ImageSelector {
 public:
  virtual ~ImageSelector() = default;
  virtual ImageChoice choose(uint32_t pid, const Mapping& mapping, const Dso& dso) = 0;
  // The input is complete: nothing the selector waits for will come, so decide for good.
  virtual void settle() {}
};

struct ResolvedAddress {
  SampleOutcome outcome = SampleOutcome::NoMapping;
  int32_t image = -1;     // image slot, when outcome is Mapped
  uint64_t vaddr = 0;     // address in the image, when outcome is Mapped
  uint32_t section = 0;   // for a kernel module: the ELF section vaddr lies in (ImageAddress)
  uint32_t dso = kNoDso;  // the mapped file at the address, if any
  static constexpr uint32_t kNoDso = UINT32_MAX;
};

// What reconsider() decided about a provisional image slot.
struct ImageRevision {
  int32_t slot = -1;
  int32_t into = -1;                              // its samples now belong here; -1: rejected
  SampleOutcome outcome = SampleOutcome::Mapped;  // what the samples of a rejected slot became
};

// The addresses [begin, end) that resolve alike, a Mapped one to itself + delta (modulo 2^64).
struct RunOf {
  uint64_t begin = 0, end = 0, delta = 0;
};

// What the addresses of one sample resolved to: between them nothing changes the process table
// or the decisions, and a branch stack's 32 or 64 ends mostly lie in one or two runs of one
// mapping (mapper/image_translator.h), so each run is looked up once. Clear it for every sample.
class ResolveMemo {
 public:
  void clear() { size_ = next_ = last_ = 0; }

  // The run `addr` lies in, when looked up before: addr resolves to its `result`, with vaddr
  // addr + its delta when Mapped.
  struct Entry {
    uint32_t pid;
    CpuMode mode;
    RunOf run;
    ResolvedAddress result;
  };
  const Entry* find(uint32_t pid, uint64_t addr, CpuMode mode) {
    // The run that answered last first: a stack's ends mostly lie in one. Entries [0, size_)
    // are this sample's.
    if (size_ != 0 && holds(entries_[last_], pid, addr, mode)) return &entries_[last_];
    for (size_t i = 0; i < size_; ++i) {
      if (holds(entries_[i], pid, addr, mode)) {
        last_ = i;
        return &entries_[i];
      }
    }
    return nullptr;
  }

 private:
  friend class ImageResolver;
  static bool holds(const Entry& e, uint32_t pid, uint64_t addr, CpuMode mode) {
    return addr - e.run.begin < e.run.end - e.run.begin && e.pid == pid && e.mode == mode;
  }
  static constexpr size_t kEntries = 4;
  Entry entries_[kEntries];
  size_t size_ = 0, next_ = 0, last_ = 0;
};

class ImageResolver {
 public:
  explicit ImageResolver(ImageSelector& selector) : selector_(selector) {}

  ResolvedAddress resolve(const ProcessTable& processes, uint32_t pid, uint64_t addr, CpuMode mode);
  // The same, remembering in `memo` the run the address fell in and answering from it.
  ResolvedAddress resolve(const ProcessTable& processes, uint32_t pid, uint64_t addr, CpuMode mode,
                          ResolveMemo& memo) {
    if (const ResolveMemo::Entry* e = memo.find(pid, addr, mode)) {
      ResolvedAddress out = e->result;
      if (out.outcome == SampleOutcome::Mapped) out.vaddr = addr + e->run.delta;
      return out;
    }
    return resolve_and_remember(processes, pid, addr, mode, memo);
  }

  // Image slots, in the order they were first met. A slot stays valid (its index too) until
  // released; a retired provisional slot has no image.
  size_t slot_count() const { return slots_.size(); }
  LoadedImage* image(int32_t slot) const { return slots_[slot].image.get(); }
  bool provisional(int32_t slot) const { return slots_[slot].provisional; }

  // Asks the selector again about every provisional decision.
  std::vector<ImageRevision> reconsider(const ProcessTable& processes);

  // Forgets the decisions about these mapped files (the process table released them) and
  // releases the slots no decision leads to any more. Returns the released slots.
  std::vector<int32_t> forget(const std::vector<uint32_t>& dso_indices);

  // What the selector could not open, once per file, and what the images had to say.
  std::vector<ImageWarning> take_warnings();

 private:
  static constexpr int32_t kUndecided = -1, kNotSelected = -2, kUnreadable = -3, kMismatch = -4;
  struct Slot {
    std::shared_ptr<LoadedImage> image;
    bool provisional = false;
    // For a provisional slot: the decision to ask again about.
    uint32_t pid = 0, dso = 0;
    Mapping mapping;
  };
  ResolvedAddress resolve_and_remember(const ProcessTable& processes, uint32_t pid, uint64_t addr,
                                       CpuMode mode, ResolveMemo& memo);
  // resolve() without a memo; `run` is set to the addresses that resolve alike, when known.
  ResolvedAddress lookup(const ProcessTable& processes, uint32_t pid, uint64_t addr, CpuMode mode,
                         RunOf& run);
  int32_t route(uint32_t pid, const Mapping& m, const Dso& dso);
  int32_t slot_of(const ImageChoice& choice, uint32_t pid, const Mapping& m);
  int32_t apply(const ImageChoice& choice, uint32_t pid, const Mapping& m, const Dso& dso);

  ImageSelector& selector_;
  std::vector<int32_t> routes_;  // per Dso index: a slot or a k* value
  std::vector<Slot> slots_;
  std::vector<ImageWarning> warnings_;
};

}  // namespace profcollect
