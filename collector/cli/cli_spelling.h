// The command line's spelling of settings (collector/host/setting_error.h): {event} is -e, {period}
// -c, and so on, so that a library message reads as the flags the user typed.
#pragma once

#include <string>
#include <string_view>

namespace profcollect {

std::string cli_flag_of(std::string_view setting);
// A library message in the command line's terms.
std::string in_cli_terms(std::string_view message);

}  // namespace profcollect
