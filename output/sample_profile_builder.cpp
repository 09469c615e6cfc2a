#include "output/sample_profile_builder.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "mapper/canonical_name.h"

namespace profcollect {

namespace {

constexpr std::string_view kAmbiguousPrefixes[] = {"__cxx_global_var_init", "__tls_init"};

bool is_ambiguous(std::string_view name) {
  for (std::string_view prefix : kAmbiguousPrefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

void drop_ambiguous_inlinees(FunctionSamples& samples) {
  for (auto& [location, callees] : samples.inlinees) {
    for (auto it = callees.begin(); it != callees.end();) {
      if (is_ambiguous(it->first)) {
        it = callees.erase(it);
      } else {
        drop_ambiguous_inlinees(it->second);
        ++it;
      }
    }
  }
}

LineLocation location_of(const InlineFrame& frame, DiscriminatorEncoding encoding) {
  return LineLocation{(frame.line - frame.decl_line) & 0xffffu,
                      base_discriminator(frame.discriminator, encoding)};
}

FunctionSamples& named(std::map<std::string, FunctionSamples, std::less<>>& map,
                       std::string_view name) {
  auto it = map.find(name);
  if (it == map.end()) it = map.emplace(std::string(name), FunctionSamples{}).first;
  return it->second;
}

// The profile of the innermost frame, creating the chain, adding `total` to every level
// (getLeafProfileAndAddTotalSamples).
FunctionSamples& leaf_profile(SampleProfile& profile, const InlineStack& frames, uint64_t total,
                              DiscriminatorEncoding encoding) {
  FunctionSamples* samples = &named(profile, canonical_function_name(frames[0].name));
  samples->total += total;
  for (size_t i = 1; i < frames.size(); ++i) {
    auto& callees = samples->inlinees[location_of(frames[i - 1], encoding)];
    samples = &named(callees, canonical_function_name(frames[i].name));
    samples->total += total;
  }
  return *samples;
}

// leaf_profile for the instructions of one render, remembering the chain of profiles of the last
// inline stack: consecutive instructions mostly share theirs, and finding each level by name in
// a map of long mangled names is most of what leaf_profile costs.
class LeafProfiles {
 public:
  LeafProfiles(SampleProfile& profile, DiscriminatorEncoding encoding)
      : profile_(profile), encoding_(encoding) {}

  FunctionSamples& leaf(const InlineStack& frames, uint64_t total) {
    if (chain_.empty() || !same_context(last_, frames)) {
      chain_.clear();
      FunctionSamples* samples = &named(profile_, canonical_function_name(frames[0].name));
      chain_.push_back(samples);
      for (size_t i = 1; i < frames.size(); ++i) {
        auto& callees = samples->inlinees[location_of(frames[i - 1], encoding_)];
        samples = &named(callees, canonical_function_name(frames[i].name));
        chain_.push_back(samples);
      }
      last_.assign(frames.begin(), frames.end());  // a copy: the symbolizer may reuse its own
    }
    for (FunctionSamples* samples : chain_) samples->total += total;
    return *chain_.back();
  }

 private:
  // The same functions (their names point into the DWARF's strings) at the same call sites.
  static bool same_context(const InlineStack& a, const InlineStack& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].name.data() != b[i].name.data() || a[i].name.size() != b[i].name.size())
        return false;
      if (i + 1 < a.size() && (a[i].line != b[i].line || a[i].decl_line != b[i].decl_line ||
                               a[i].discriminator != b[i].discriminator))
        return false;
    }
    return true;
  }

  SampleProfile& profile_;
  DiscriminatorEncoding encoding_;
  InlineStack last_;                     // the frames chain_ was found for
  std::vector<FunctionSamples*> chain_;  // map nodes: their addresses do not change
};

// A boundary of the disjoint-range sweep: at `address` the count changes by `count` and the
// number of ranges open by `open`.
struct Boundary {
  uint64_t address;
  int64_t count;
  int64_t open;
};

}  // namespace

SampleProfile build_sample_profile(const RangeProfile& input, const AutofdoBinary& binary,
                                   CountingRule rule, ProfileBuildStats* stats,
                                   const RenderStop* stop) {
  std::vector<CountedRange> ranges;
  ranges.reserve(input.ranges.size());
  for (const auto& [range, count] : input.ranges)
    ranges.push_back(CountedRange{range.first, range.second, count});
  return build_sample_profile(ranges, input.branches, binary, rule, stats, stop);
}

SampleProfile build_sample_profile(
    std::span<const CountedRange> ranges,
    const std::map<std::pair<uint64_t, uint64_t>, uint64_t>& branches, const AutofdoBinary& binary,
    CountingRule rule, ProfileBuildStats* stats, const RenderStop* stop) {
  ProfileBuildStats local;
  ProfileBuildStats& st = stats ? *stats : local;
  const DiscriminatorEncoding encoding = binary.discriminator_encoding();
  SampleProfile profile;

  // Ranges plus the zero-count ranges of the functions they start in, as boundary changes,
  // sorted by address then summed (a vector: a map of two nodes per range costs several times
  // the memory and time for IP samples' one-instruction ranges).
  std::vector<Boundary> boundaries;
  boundaries.reserve(2 * ranges.size());
  auto add_range = [&](uint64_t first, uint64_t last, uint64_t count) {
    boundaries.push_back(Boundary{first, static_cast<int64_t>(count), 1});
    if (last == UINT64_MAX) return;
    boundaries.push_back(Boundary{last + 1, -static_cast<int64_t>(count), -1});
  };
  std::unordered_set<uint32_t> zero_filled;
  for (const CountedRange& range : ranges) {
    if (range.first > range.last) continue;
    add_range(range.first, range.last, range.count);
    const FunctionRange* function = binary.function_range(range.first);
    if (function == nullptr || !zero_filled.insert(function->function).second) continue;
    for (const AddressRange& r : binary.ranges_of(*function)) add_range(r.begin, r.end - 1, 0);
  }
  std::sort(boundaries.begin(), boundaries.end(),
            [](const Boundary& a, const Boundary& b) { return a.address < b.address; });

  const InstructionMap& code = binary.instructions();
  // Every piece of code some range covers, with its count, grouped by the DWARF unit it starts
  // in: in address order the units' code interleaves (each unit's .text.hot, .text.unlikely, ...
  // parts lie among every other unit's), and a unit left and met again would be decoded again.
  struct Piece {
    uint32_t unit;
    uint64_t first, last, count;
  };
  std::vector<Piece> pieces;
  {
    int64_t count = 0, open = 0;
    for (size_t i = 0; i < boundaries.size();) {
      const uint64_t first = boundaries[i].address;
      for (; i < boundaries.size() && boundaries[i].address == first; ++i) {
        count += boundaries[i].count;
        open += boundaries[i].open;
      }
      if (open <= 0) continue;
      const uint64_t last = i == boundaries.size() ? UINT64_MAX : boundaries[i].address - 1;
      const uint32_t unit = binary.dwarf().unit_of(first).value_or(UINT32_MAX);
      pieces.push_back(Piece{unit, first, last, static_cast<uint64_t>(count)});
    }
  }
  boundaries = std::vector<Boundary>();
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const Piece& a, const Piece& b) { return a.unit < b.unit; });
  LeafProfiles leaves(profile, encoding);
  const unsigned stride = stop ? std::max(1u, stop->stride) : 1;
  unsigned until_check = stride;
  auto visit = [&](const Instruction& instruction, uint64_t count) {
    ++st.instructions;
    if (stop && --until_check == 0) {
      until_check = stride;
      stop->check();
    }
    const InlineStack& frames = binary.dwarf().symbolize(instruction.address);
    if (frames.empty()) {
      ++st.unsymbolized_instructions;
      return;
    }
    FunctionSamples& leaf = leaves.leaf(frames, count * instruction.size);
    const InlineFrame& frame = frames.back();
    BodySample& line = leaf.body[location_of(frame, encoding)];
    if (rule == CountingRule::IpSamples) {
      line.count += count;
    } else {
      const uint64_t scaled = count * duplication_factor(frame.discriminator, encoding);
      if (line.count <= scaled) line.count = scaled;
    }
  };
  for (const Piece& piece : pieces) {
    code.for_each(piece.first, piece.last,
                  [&](const Instruction& instruction) { visit(instruction, piece.count); });
  }

  // Calls to function entries, grouped by the unit their source is in, as the pieces are: a
  // unit left is decoded again when asked about later (the sums do not depend on the order).
  struct Call {
    uint32_t unit;
    const std::pair<const std::pair<uint64_t, uint64_t>, uint64_t>* branch;
  };
  std::vector<Call> calls_in_order;
  for (const auto& entry : branches) {
    if (binary.callee_name(entry.first.second).empty()) continue;  // not a call
    const uint64_t source = entry.first.first;
    const uint32_t unit = source == kExternalAddress
                              ? UINT32_MAX
                              : binary.dwarf().unit_of(source).value_or(UINT32_MAX);
    calls_in_order.push_back(Call{unit, &entry});
  }
  std::stable_sort(calls_in_order.begin(), calls_in_order.end(),
                   [](const Call& a, const Call& b) { return a.unit < b.unit; });
  for (const Call& call : calls_in_order) {
    const auto& [branch, calls] = *call.branch;
    const std::string_view callee = binary.callee_name(branch.second);
    ++st.call_branches;
    if (branch.first != kExternalAddress) {
      const InlineStack& frames = binary.dwarf().symbolize(branch.first);
      if (!frames.empty()) {
        FunctionSamples& leaf = leaf_profile(profile, frames, 0, encoding);
        BodySample& line = leaf.body[location_of(frames.back(), encoding)];
        auto target = line.call_targets.find(callee);
        if (target == line.call_targets.end())
          target = line.call_targets.emplace(std::string(callee), 0).first;
        target->second += calls;
      }
    }
    named(profile, callee).head += calls;
  }

  // A top-level line is executed at least as often as the calls made from it.
  for (auto& [name, samples] : profile) {
    for (auto& [location, line] : samples.body) {
      uint64_t calls = 0;
      for (const auto& [callee, n] : line.call_targets) calls += n;
      if (calls > line.count) line.count = calls;
    }
  }

  for (auto it = profile.begin(); it != profile.end();) {
    if (is_ambiguous(it->first)) {
      it = profile.erase(it);
    } else {
      drop_ambiguous_inlinees(it->second);
      ++it;
    }
  }
  return profile;
}

}  // namespace profcollect
