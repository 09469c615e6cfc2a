#include "output/binary_profiles.h"

#include <algorithm>

#include "mapper/binary_matcher.h"
#include "output/autofdo_writer.h"
#include "output/fdata_writer.h"
#include "output/range_profile.h"
#include "output/unsymbolized_writer.h"
#include "output/fdata_branch_writer.h"
#include "output/function_profile.h"
#include "output/preagg_writer.h"

namespace profcollect {

bool BinarySelection::selects(const Dso& dso) const {
  if (all) return true;
  for (const auto& p : paths) {
    if (dso.path == p) return true;
  }
  if (!dso.build_id.empty()) {
    for (const auto& id : build_ids) {
      if (id == dso.build_id) return true;
    }
  }
  return false;
}

BinaryProfiles::BinaryProfiles(BinarySelection selection, Opener opener, std::string event_name,
                               SymbolSearchOptions symbol_options)
    : selection_(std::move(selection)),
      opener_(std::move(opener)),
      event_name_(std::move(event_name)),
      symbol_options_(std::move(symbol_options)) {}

std::vector<std::string> BinaryProfiles::take_warnings() {
  std::vector<std::string> w;
  w.swap(warnings_);
  return w;
}

int32_t BinaryProfiles::route(uint32_t pid, const Mapping& m, uint32_t dso_index, const Dso& dso) {
  if (dso_index >= route_.size()) route_.resize(dso_index + 1, kUndecided);
  int32_t& r = route_[dso_index];
  if (r != kUndecided) return r;
  if (dso.kernel || BinaryMatcher::is_anon(dso.path) || dso.path.starts_with("[")) {
    return r = kNotSelected;
  }
  const bool selected = selection_.selects(dso);
  // Mappings read from /proc/PID/maps (processes running before the attach) carry no build-id:
  // a selection by build-id is then decided by the file's own.
  const bool ask_file = !selected && dso.build_id.empty() && !selection_.build_ids.empty();
  if (!selected && !ask_file) return r = kNotSelected;
  std::string why;
  std::optional<OpenedBinary> opened = opener_(pid, m, dso, why);
  if (!opened) {
    if (!selected) return r = kNotSelected;  // cannot tell; not named by path
    warnings_.push_back(dso.path + ": " + why + "; its samples are counted as unmapped");
    return r = kUnreadable;
  }
  if (!selected) {
    const BuildId& id = opened->identity.build_id;
    if (id.empty() || std::find(selection_.build_ids.begin(), selection_.build_ids.end(), id) ==
                          selection_.build_ids.end()) {
      return r = kNotSelected;
    }
  }
  // The same binary may be seen as several Dso entries (another path to one file, a record
  // with and without build-id): they share one profile.
  std::string dir = opened->identity.directory_name();
  for (size_t i = 0; i < binaries_.size(); ++i) {
    if (binaries_[i].opened.identity.directory_name() == dir) return r = static_cast<int32_t>(i);
  }
  Binary b;
  b.segments = ExecSegmentMap(opened->elf->load_segments());
  b.opened = std::move(*opened);
  binaries_.push_back(std::move(b));
  return r = static_cast<int32_t>(binaries_.size() - 1);
}

BinaryProfiles::Located BinaryProfiles::locate(uint32_t pid, uint64_t addr, CpuMode mode,
                                                const ProcessTable& processes) {
  const Mapping* m = processes.find(pid, addr, mode);
  if (!m || !m->executable) return {};
  int32_t r = route(pid, *m, m->dso, processes.dso(m->dso));
  if (r < 0) return {};
  auto vaddr = binaries_[r].segments.file_offset_to_vaddr(addr - m->start + m->pgoff);
  if (!vaddr) return {};
  return {r, *vaddr};
}

SampleOutcome BinaryProfiles::add_sample(uint32_t pid, uint64_t addr, CpuMode mode,
                                         uint64_t time_ns, const ProcessTable& processes) {
  SampleOutcome outcome;
  const Mapping* m = processes.find(pid, addr, mode);
  if (!m) {
    outcome = (mode == CpuMode::Kernel || mode == CpuMode::GuestKernel) ? SampleOutcome::Kernel
                                                                        : SampleOutcome::NoMapping;
  } else {
    const Dso& dso = processes.dso(m->dso);
    int32_t r = route(pid, *m, m->dso, dso);
    if (r >= 0) {
      Binary& b = binaries_[r];
      auto vaddr = m->executable ? b.segments.file_offset_to_vaddr(addr - m->start + m->pgoff)
                                 : std::nullopt;
      if (vaddr) {
        b.ips.add(*vaddr);
        ++b.samples;
        if (time_ns) {
          if (b.first_ns == 0 || time_ns < b.first_ns) b.first_ns = time_ns;
          b.last_ns = std::max(b.last_ns, time_ns);
        }
        outcome = SampleOutcome::Mapped;
      } else {
        outcome = SampleOutcome::NotExecutable;
      }
    } else if (dso.kernel) {
      outcome = SampleOutcome::Kernel;
    } else if (BinaryMatcher::is_anon(dso.path)) {
      outcome = SampleOutcome::AnonOrJit;
    } else if (r == kUnreadable) {
      outcome = SampleOutcome::BuildIdMismatch;
    } else {
      outcome = SampleOutcome::OtherBinary;
    }
  }
  outcomes_.add(outcome);
  return outcome;
}

void BinaryProfiles::load_symbols(Binary& b) {
  if (!b.symbols) b.symbols = std::make_shared<const SymbolTable>(SymbolTable::load(*b.opened.elf, symbol_options_));
}

void BinaryProfiles::load_debug(Binary& b) {
  if (b.debug_tried) return;
  // AutoFDO needs DWARF; a binary without it still gets its BOLT profile (said once).
  b.debug_tried = true;
  try {
    AutofdoBinaryOptions ao;
    ao.debug_dirs = symbol_options_.debug_dirs;
    b.debug = AutofdoBinary::open(b.opened.elf, ao);
  } catch (const std::exception& e) {
    warnings_.push_back(std::string("no AutoFDO profile for ") + b.opened.identity.path + ": " + e.what());
  }
}

void BinaryProfiles::prepare_branches(Binary& b) {
  load_symbols(b);
  load_debug(b);
  // The symbol table judges which fall-throughs began outside their function, as perf2bolt does.
  b.branches = std::make_unique<BranchSamples>(BranchSamples{BranchProfile(b.symbols.get()), {}, 0});
  if (b.debug) b.ranges = std::make_unique<BranchStackCounter>(b.debug->instructions());
}

void BinaryProfiles::add_branch_stack(uint32_t pid, std::span<const BranchEntry> newest_first,
                                      const ProcessTable& processes) {
  if (newest_first.empty()) return;
  located_.clear();
  touched_.clear();
  for (const BranchEntry& e : newest_first) {
    // Branch ends are resolved as user addresses: a kernel end lies in no user mapping.
    LocatedEntry le{locate(pid, e.from, CpuMode::User, processes),
                    locate(pid, e.to, CpuMode::User, processes), e.mispredicted()};
    for (int32_t r : {le.from.binary, le.to.binary}) {
      if (r >= 0 && std::find(touched_.begin(), touched_.end(), r) == touched_.end()) touched_.push_back(r);
    }
    located_.push_back(le);
  }
  for (int32_t r : touched_) {
    Binary& b = binaries_[r];
    if (!b.branches) prepare_branches(b);
    bolt_stack_.clear();
    range_stack_.clear();
    for (const LocatedEntry& le : located_) {
      BranchStackEntry bolt;
      BranchEnds ends;
      bolt.from_inside = le.from.binary == r;
      bolt.to_inside = le.to.binary == r;
      // perf2bolt writes every end outside the binary as address 0 ("0 [unknown] 0").
      bolt.from = bolt.from_inside ? le.from.vaddr : 0;
      bolt.to = bolt.to_inside ? le.to.vaddr : 0;
      bolt.mispredicted = le.mispredicted;
      if (bolt.from_inside) ends.source = le.from.vaddr;
      if (bolt.to_inside) ends.target = le.to.vaddr;
      bolt_stack_.push_back(bolt);
      range_stack_.push_back(ends);
    }
    b.branches->bolt.add_stack(bolt_stack_);
    ++b.branches->stacks;
    if (b.ranges) b.ranges->add(range_stack_);
  }
}

void BinaryProfiles::flush(ProfileStore& store) {
  for (auto& b : binaries_) {
    if (b.samples == 0 && !b.branches) continue;
    load_symbols(b);
    FunctionProfile fp = FunctionProfile::build(b.ips, *b.symbols);
    BinaryProfileSnapshot s;
    s.identity = b.opened.identity;
    s.fdata = FdataWriter::to_no_lbr(fp, {event_name_});
    s.samples = b.samples;
    s.first_sample_ns = b.first_ns;
    s.last_sample_ns = b.last_ns;
    s.event = event_name_;
    s.ips = b.ips;
    load_debug(b);
    if (b.branches) {
      if (b.ranges) b.branches->ranges = b.ranges->profile();
      s.branches = b.branches.get();
      if (!b.blocks && !b.blocks_tried) {
        b.blocks_tried = true;  // said once, not at every flush
        try {
          b.blocks = std::make_shared<BoltBlockMap>(*b.opened.elf);
        } catch (const std::exception& e) {
          warnings_.push_back(b.opened.identity.path + ": no BOLT branch profile (" + e.what() +
                              "); bolt.fdata holds its IP samples");
        }
      }
    }
    const AutofdoBinary* debug = b.debug.get();
    const ElfBinary* elf = b.opened.elf.get();
    const bool unsym = write_unsymbolized_;
    std::shared_ptr<const SymbolTable> symbols = b.symbols;
    std::shared_ptr<BoltBlockMap> blocks = b.blocks;
    s.render_extra = [debug, elf, unsym, symbols, blocks](const CumulativeSamples& cumulative) {
      std::vector<std::pair<std::string, std::string>> files;
      const BranchSamples* branches = cumulative.branches;
      if (branches) {
        if (blocks) {
          FdataBranchWriter writer(*symbols, *blocks);
          files.emplace_back("bolt.fdata", writer.write(branches->bolt));
        } else {
          files.emplace_back("bolt.fdata", format_no_lbr_fdata(cumulative.no_lbr));
        }
        files.emplace_back("bolt.preagg", PreaggWriter::write(branches->bolt));
      }
      // Branch ranges, when there are, are what AutoFDO wants; else the IP samples.
      const bool from_ranges = branches && !branches->ranges.empty();
      if (debug) {
        files.emplace_back("autofdo.prof", from_ranges ? write_autofdo_from_ranges(branches->ranges, *debug)
                                                       : write_autofdo_from_ips(cumulative.ips, *debug));
      }
      if (unsym) {
        // Needs no debug info here: symbolized later where the debug info is.
        files.emplace_back("autofdo.unsym",
                           write_unsymbolized_profile(from_ranges ? branches->ranges : ranges_from_ips(cumulative.ips),
                                                      elf->preferred_base()));
      }
      return files;
    };
    if (unsym) {
      UnsymbolizedKind kind = b.ranges ? UnsymbolizedKind::BranchRanges : UnsymbolizedKind::IpSamples;
      s.extra_meta["unsymbolized"] = unsymbolized_kind_name(kind);
      s.extra_meta["unsymbolized_profgen_flags"] = unsymbolized_profgen_flags(kind);
    }
    store.write_binary(s);
  }
}

}  // namespace profcollect
