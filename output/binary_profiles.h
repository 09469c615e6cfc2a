// Live aggregation per binary: samples of every selected binary, resolved by the deterministic
// rule the moment they arrive, kept as per-address counts, and written through a ProfileStore on
// each flush. Knows nothing of perf_event: it is fed (pid, address, time) with the mapping and
// file the process table found, and opens binaries through an injected function (the collector
// reads them via /proc/PID/map_files or /proc/PID/root and checks the build-id).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mapper/autofdo_binary.h"
#include "mapper/elf_binary.h"
#include "mapper/exec_segment_map.h"
#include "mapper/process_table.h"
#include "mapper/sample_outcome.h"
#include "mapper/symbol_table.h"
#include "collector/record.h"
#include "mapper/bolt_block_map.h"
#include "output/branch_samples_file.h"
#include "output/branch_stack_counter.h"
#include "output/ip_profile.h"
#include "output/profile_store.h"

namespace profcollect {

// Which binaries get profiles: every one, or those named by path or build-id.
struct BinarySelection {
  bool all = false;
  std::vector<std::string> paths;  // compared with the path the MMAP2 record reports
  std::vector<BuildId> build_ids;
  bool selects(const Dso& dso) const;
};

struct OpenedBinary {
  std::shared_ptr<const ElfBinary> elf;
  BinaryIdentity identity;
};

class BinaryProfiles {
 public:
  // Opens the file of `dso` as mapped by process `pid` at `mapping`; nullopt (with `why`) when it
  // cannot be read or is not the file that was mapped (build-id differs).
  using Opener = std::function<std::optional<OpenedBinary>(uint32_t pid, const Mapping& mapping,
                                                           const Dso& dso, std::string& why)>;

  BinaryProfiles(BinarySelection selection, Opener opener, std::string event_name,
                 SymbolSearchOptions symbol_options = {});

  // Also write autofdo.unsym (llvm-profgen's unsymbolized profile) per binary.
  void set_write_unsymbolized(bool on) { write_unsymbolized_ = on; }

  // Resolves and counts one sample. time_ns is Unix-epoch nanoseconds (0 if unknown).
  SampleOutcome add_sample(uint32_t pid, uint64_t addr, CpuMode mode, uint64_t time_ns,
                           const ProcessTable& processes);

  // Counts one sample's branch stack (newest entry first) in every selected binary it touches:
  // BOLT's taken branches and fall-throughs, and llvm-profgen's ranges when the binary has debug
  // info. Kernel addresses are outside every user binary. A binary's symbols, code and debug
  // info are loaded when a stack first touches it; after that nothing is allocated per sample
  // unless a new branch or range is seen.
  void add_branch_stack(uint32_t pid, std::span<const BranchEntry> newest_first,
                        const ProcessTable& processes);

  // Writes every binary with samples. Throws OutputError; what is in memory is kept, so a later
  // flush can succeed.
  void flush(ProfileStore& store);

  const OutcomeCounts& outcomes() const { return outcomes_; }
  size_t binary_count() const { return binaries_.size(); }
  // Messages about binaries that could not be opened (once per file).
  std::vector<std::string> take_warnings();

 private:
  struct Binary {
    OpenedBinary opened;
    ExecSegmentMap segments;
    std::shared_ptr<const SymbolTable> symbols;  // loaded at the first flush or branch stack
    std::unique_ptr<AutofdoBinary> debug;  // loaded at the first flush; null without debug info
    bool debug_tried = false;
    IpProfile ips;
    uint64_t samples = 0;
    uint64_t first_ns = 0, last_ns = 0;
    // Branch stacks: made when one first touches the binary.
    std::unique_ptr<BranchSamples> branches;       // this run's; its ranges filled at flush
    std::unique_ptr<BranchStackCounter> ranges;    // null without debug info
    std::shared_ptr<BoltBlockMap> blocks;          // for branch fdata, made at the first flush
    bool blocks_tried = false;
  };
  static constexpr int32_t kUndecided = -1, kNotSelected = -2, kUnreadable = -3;

  // Where an address lies: a selected binary's index and ELF vaddr, or binary < 0.
  struct Located {
    int32_t binary = -1;
    uint64_t vaddr = 0;
  };
  Located locate(uint32_t pid, uint64_t addr, CpuMode mode, const ProcessTable& processes);
  int32_t route(uint32_t pid, const Mapping& m, uint32_t dso_index, const Dso& dso);
  void load_symbols(Binary& b);
  void load_debug(Binary& b);
  void prepare_branches(Binary& b);

  BinarySelection selection_;
  Opener opener_;
  std::string event_name_;
  SymbolSearchOptions symbol_options_;
  std::vector<int32_t> route_;  // per Dso index: index into binaries_, or a k* value
  std::vector<Binary> binaries_;
  OutcomeCounts outcomes_;
  std::vector<std::string> warnings_;
  bool write_unsymbolized_ = false;
  // Scratch for add_branch_stack, reused so that a sample allocates nothing.
  struct LocatedEntry {
    Located from, to;
    bool mispredicted = false;
  };
  std::vector<LocatedEntry> located_;
  std::vector<int32_t> touched_;
  std::vector<BranchStackEntry> bolt_stack_;
  std::vector<BranchEnds> range_stack_;
};

}  // namespace profcollect
