// bolt-inferred: BOLT's pre-aggregated profile (llvm-bolt --pa -data=) whose edges are inferred
// from the IP samples over each sampled function's CFG (output/edge_inference.h), for binaries
// profiled without branch stacks. With branch stacks there is nothing to infer: it holds their
// measured branches and fall-throughs, as the preagg format does.
#include <cmath>

#include "output/edge_inference.h"
#include "output/preagg_writer.h"
#include "output/profile_format.h"

namespace profcollect {

namespace {

FormatResult render_bolt_inferred(const FormatInput& in) {
  FormatResult r;
  if (in.branches && !in.no_lbr) {
    r.content = PreaggWriter::write(in.branches->bolt);
    r.meta = {{"bolt_inferred", {{"edges", "branch_stacks"}}}};
    return r;
  }
  BoltBlockMap* blocks = in.image.blocks();
  if (blocks == nullptr) {
    r.missing = "the binary's code cannot be split into BOLT's basic blocks";
    return r;
  }
  const InferredEdges inferred = infer_edges(in.counts.ips, in.image.symbols(), *blocks, in.stop);
  const EdgeInferenceStats& s = inferred.stats;
  r.content = PreaggWriter::write(inferred.profile);
  const double share =
      s.samples == 0 ? 0.0
                     : static_cast<double>(s.inferred_samples) / static_cast<double>(s.samples);
  r.meta = {{"bolt_inferred",
             {{"edges", "ip_samples"},
              {"method", "min-cost flow over BOLT's CFG of each sampled function"},
              {"functions", s.functions},
              {"inferred_functions", s.inferred_functions},
              {"inferred_blocks", s.blocks},
              {"blocks_kept_warm", s.blocks_kept_warm},
              {"inferred_sample_share", std::round(share * 10000.0) / 10000.0},
              {"samples_not_simple", s.not_simple_samples},
              {"samples_outside_functions", s.no_function_samples}}}};
  return r;
}

}  // namespace

extern const FormatSpec kBoltInferredFormat{
    .name = "bolt-inferred",
    .file = "bolt.inferred.preagg",
    .description =
        "BOLT's pre-aggregated profile (llvm-bolt --pa -data=) with edges inferred "
        "from IP samples; branch stacks' own edges when there are some",
    .live_default = true,
    .kernel = false,
    .function_symbols = true,
    .render = render_bolt_inferred,
    .merge_renders = true,
};

}  // namespace profcollect
