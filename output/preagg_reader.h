// Reads BOLT's pre-aggregated profile back as PreaggWriter writes it (output/preagg_writer.h), so
// that the profiles of many hosts add up without the binary; PreaggWriter::write() writes the sum.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "output/branch_profile.h"

namespace profcollect {

// "B <from> <to> <count> <mispredicts>", "F|f <start> <end> <count>"; an end outside the binary
// as "X:<addr>". nullopt with `error` ("line N: ...") at the first line that is not one.
std::optional<BranchProfile> parse_preagg(std::string_view text, std::string* error);

}  // namespace profcollect
