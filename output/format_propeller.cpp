// propeller: the two files of a Propeller relink (output/propeller_profile.h) -- the basic-block
// clusters for clang's -fbasic-block-sections=list= and the function order for lld's
// --symbol-ordering-file -- for a binary built with -fbasic-block-address-map. Named as the
// kernel's CLANG_PROPELLER_PROFILE_PREFIX expects them (PREFIX_cc_profile.txt,
// PREFIX_ld_profile.txt), with the prefix "propeller" in a binary's directory. The edges come
// from branch stacks; without them, from the IP samples as bolt-inferred infers them
// (output/edge_inference.h), and meta.json says which.
#include <cmath>
#include <optional>

#include "mapper/autofdo_binary.h"
#include "output/edge_inference.h"
#include "output/profile_format.h"
#include "output/propeller_profile.h"

namespace profcollect {

namespace {

FormatResult render_propeller(const FormatInput& in) {
  FormatResult r;
  const BbAddrMap* map = in.image.bb_addr_map();
  if (map == nullptr) {
    r.missing = in.image.bb_addr_map_error();
    return r;
  }
  const bool measured = in.branches != nullptr && !in.no_lbr;
  std::optional<InferredEdges> inferred;
  if (!measured) {
    BoltBlockMap* blocks = in.image.blocks();
    if (blocks == nullptr) {
      r.missing =
          "no branch stacks, and the binary's code cannot be split into basic blocks to infer "
          "its edges from the IP samples";
      return r;
    }
    inferred.emplace(infer_edges(in.counts.ips, in.image.symbols(), *blocks, in.stop));
  }
  const BranchProfile& branches = measured ? in.branches->bolt : inferred->profile;
  // Static functions of several files that share a name are told apart by their compile unit,
  // which needs the debug info (read only when such a function ran).
  const ModuleNameOf module_of = [&in](uint64_t address) -> std::string {
    const AutofdoBinary* debug = in.image.debug();
    if (debug == nullptr) return {};
    const std::optional<uint32_t> unit = debug->dwarf().unit_of(address);
    return unit ? debug->dwarf().unit_name(*unit) : std::string();
  };
  const PropellerProfile p =
      make_propeller_profile(branches, *map, in.image.symbols(), &in.counts.ips, module_of);
  const PropellerStats& s = p.stats;
  r.content = p.clusters;
  r.companion = p.symbol_order;
  const double share =
      s.samples == 0 ? 0.0
                     : static_cast<double>(s.covered_samples) / static_cast<double>(s.samples);
  r.meta = {{"propeller",
             {{"edges", measured ? "branch_stacks" : "ip_samples"},
              {"functions", s.functions},
              {"blocks", s.blocks},
              {"functions_with_warm_part", s.warm_parts},
              {"warm_blocks", s.warm_blocks},
              {"functions_with_cold_part", s.cold_parts},
              {"functions_unnamed", s.unnamed_functions},
              {"functions_named_by_module", s.module_named},
              {"sample_share", std::round(share * 10000.0) / 10000.0},
              {"branches_mapped", s.branches_mapped},
              {"branches_unmapped", s.branches_unmapped},
              {"ranges_mapped", s.ranges_mapped},
              {"ranges_unmapped", s.ranges_unmapped}}}};
  return r;
}

}  // namespace

extern const FormatSpec kPropellerFormat{
    .name = "propeller",
    .file = "propeller_cc_profile.txt",
    .companion_file = "propeller_ld_profile.txt",
    .description =
        "Propeller's basic-block clusters (clang -fbasic-block-sections=list=) and function "
        "order (lld --symbol-ordering-file), for a binary built with -fbasic-block-address-map",
    .live_default = false,
    .kernel = true,
    .branch_stacks = true,
    .block_address_map = true,
    .function_symbols = true,
    .render = render_propeller,
    .merge_renders = true,
};

}  // namespace profcollect
