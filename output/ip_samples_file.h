// samples.ip: the IP sample counts of one binary as a profile directory keeps them, so that the
// next run (or a merge of many hosts' directories) adds to them and remakes profiles from the
// sum. One line per sampled address, sorted by address:
//
//   <hex ELF vaddr> <decimal count>
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "output/ip_profile.h"

namespace profcollect {

std::string format_ip_samples(const IpProfile& ips);

// nullopt with `error` ("line N: ...") at the first line that is not "<hex> <decimal>" (a sign,
// extra spaces, or more digits than 64 bits hold).
std::optional<IpProfile> parse_ip_samples(std::string_view text, std::string* error);

}  // namespace profcollect
