#include "output/binary_profiles.h"

#include <algorithm>

#include "mapper/binary_matcher.h"
#include "output/autofdo_writer.h"
#include "output/fdata_writer.h"
#include "output/range_profile.h"
#include "output/unsymbolized_writer.h"
#include "output/function_profile.h"

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

void BinaryProfiles::flush(ProfileStore& store) {
  for (auto& b : binaries_) {
    if (b.samples == 0) continue;
    if (!b.symbols) b.symbols = SymbolTable::load(*b.opened.elf, symbol_options_);
    FunctionProfile fp = FunctionProfile::build(b.ips, *b.symbols);
    BinaryProfileSnapshot s;
    s.identity = b.opened.identity;
    s.fdata = FdataWriter::to_no_lbr(fp, {event_name_});
    s.samples = b.samples;
    s.first_sample_ns = b.first_ns;
    s.last_sample_ns = b.last_ns;
    s.event = event_name_;
    s.ips = b.ips;
    if (!b.debug_tried) {
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
    const AutofdoBinary* debug = b.debug.get();
    const ElfBinary* elf = b.opened.elf.get();
    const bool unsym = write_unsymbolized_;
    if (debug || unsym) {
      s.render_extra = [debug, elf, unsym](const IpProfile& cumulative) {
        std::vector<std::pair<std::string, std::string>> files;
        if (debug) files.emplace_back("autofdo.prof", write_autofdo_from_ips(cumulative, *debug));
        if (unsym) {
          // Needs no debug info here: symbolized later where the debug info is.
          files.emplace_back("autofdo.unsym",
                             write_unsymbolized_profile(ranges_from_ips(cumulative), elf->preferred_base()));
        }
        return files;
      };
    }
    if (unsym) {
      s.extra_meta["unsymbolized"] = unsymbolized_kind_name(UnsymbolizedKind::IpSamples);
      s.extra_meta["unsymbolized_profgen_flags"] = unsymbolized_profgen_flags(UnsymbolizedKind::IpSamples);
    }
    store.write_binary(s);
  }
}

}  // namespace profcollect
