#include "collector/host/errno_name.h"

#include <cstring>

namespace profcollect {

std::string errno_name(int err) {
  // glibc 2.32+; the name is what users search for, unlike the localized strerror text.
  if (const char* name = ::strerrorname_np(err)) return name;
  return "errno " + std::to_string(err);
}

}  // namespace profcollect
