// The function name a sample profile uses for a symbol or DWARF name, as LLVM's
// FunctionSamples::getCanonicalFnName does under the default "selected" policy: a trailing
// ".llvm.<id>" (ThinLTO promotion) and then a trailing ".part.<n>" (partial inlining) are cut
// off; ".__uniq.<hash>" and everything else (".cold", ".isra.0", ...) stays.
#pragma once

#include <string_view>

namespace profcollect {

std::string_view canonical_function_name(std::string_view name);

}  // namespace profcollect
