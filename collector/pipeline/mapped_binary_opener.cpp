#include "collector/pipeline/mapped_binary_opener.h"

#include <sys/stat.h>

#include <cstdio>
#include <string_view>

namespace profcollect {

namespace {
constexpr std::string_view kDeleted = " (deleted)";

std::string strip_deleted(const std::string& p) {
  if (p.size() > kDeleted.size() &&
      p.compare(p.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
    return p.substr(0, p.size() - kDeleted.size());
  }
  return p;
}
}  // namespace

OpenResult open_mapped_binary(uint32_t pid, const Mapping& mapping, const Dso& dso) {
  OpenResult b;
  std::string& why = b.why;
  bool mismatch = false;
  std::string path = strip_deleted(dso.path);
  char range[64];
  std::snprintf(range, sizeof range, "%llx-%llx", static_cast<unsigned long long>(mapping.start),
                static_cast<unsigned long long>(mapping.end));
  const std::string candidates[] = {
      "/proc/" + std::to_string(pid) + "/map_files/" + range,
      "/proc/" + std::to_string(pid) + "/root" + path,
      path,
  };
  why.clear();
  for (const auto& candidate : candidates) {
    struct stat st;
    if (::stat(candidate.c_str(), &st) != 0) continue;
    try {
      auto elf = ElfBinary::open(candidate);
      if (!dso.build_id.empty() && !(elf->build_id() == dso.build_id)) {
        why = candidate + " has build-id " + elf->build_id().to_hex() + ", the mapped file had " +
              dso.build_id.to_hex();
        mismatch = true;
        continue;
      }
      b.elf = std::move(elf);
      b.why.clear();
      b.identity.path = path;
      b.identity.build_id = b.elf->build_id();
      b.identity.dev = st.st_dev;
      b.identity.ino = st.st_ino;
      b.identity.mtime_ns =
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      return b;
    } catch (const ElfError& e) {
      // A later candidate may still be the file; a build-id mismatch met earlier stays the reason.
      if (!mismatch) why = e.what();
    }
  }
  if (why.empty()) why = "cannot be opened (process gone and file removed?)";
  b.problem = mismatch ? OpenProblem::BuildIdMismatch : OpenProblem::Unreadable;
  return b;
}

}  // namespace profcollect
