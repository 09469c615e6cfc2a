#include "collector/aux/aux_decoder.h"
#include "collector/aux/spe_sample_synthesizer.h"

namespace profcollect {

std::vector<std::unique_ptr<AuxDecoder>> make_aux_decoders(PerfSessionState& state) {
  std::vector<std::unique_ptr<AuxDecoder>> decoders;
  decoders.push_back(std::make_unique<SpeSampleSynthesizer>(state));
  return decoders;
}

}  // namespace profcollect
