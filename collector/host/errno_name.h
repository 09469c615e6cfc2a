// Symbolic errno names ("ENOENT") for messages that name what the kernel answered.
#pragma once

#include <string>

namespace profcollect {

// "ENOENT"; "errno 1234" for a number without a name.
std::string errno_name(int err);

}  // namespace profcollect
