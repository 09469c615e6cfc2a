// Reads BOLT's branch fdata back (ours or perf2bolt's, see output/fdata_branch_writer.h), so that
// the profiles of many hosts can be added up line by line without the binary, as BOLT's
// merge-fdata does. FdataBranchWriter::format() writes the result.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "output/fdata_branch_writer.h"

namespace profcollect {

// Lines "<k> <name> <offset> <k> <name> <offset> <mispredicts> <count>"; names keep their
// \-escapes. Equal edges add up. A first line "boltedcollection" (a profile collected on a BOLTed
// binary, translated through BAT) sets bolted_collection. nullopt with `error` ("line N: ...")
// when a line is not one, a no_lbr header included (a no_lbr file is not branch fdata).
std::optional<BranchFdata> parse_branch_fdata(std::string_view text, std::string* error);

}  // namespace profcollect
