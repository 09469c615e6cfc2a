// The deterministic address rule: a file offset inside a mapping of a binary goes to the one
// executable PT_LOAD whose [page-aligned p_offset, p_offset + p_filesz) holds it, and becomes
// that segment's virtual address. No "first segment that fits" heuristic: lld packs several
// PT_LOADs into one page of file offsets, and only the PF_X one may take an instruction address.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "mapper/elf_binary.h"

namespace profcollect {

class ExecSegmentMap {
 public:
  ExecSegmentMap() = default;
  explicit ExecSegmentMap(const std::vector<LoadSegment>& segments, uint64_t page_size = 4096);

  // A run of file offsets or of vaddrs, [begin, end), that translates linearly: begin to
  // `target`, begin + k to target + k.
  struct Run {
    uint64_t begin = 0, end = 0, target = 0;
  };

  // vaddr for a file offset, or nullopt when no executable segment holds it.
  std::optional<uint64_t> file_offset_to_vaddr(uint64_t file_offset) const;
  // The run of file offsets around `file_offset` that translate by the same rule and shift (the
  // segment holding it; for the page-rounded bytes before a segment, that offset alone), or
  // nullopt as file_offset_to_vaddr.
  std::optional<Run> file_run(uint64_t file_offset) const;
  // The executable segment holding vaddr, as the run of its vaddrs to their file offsets.
  std::optional<Run> vaddr_run(uint64_t vaddr) const;
  // The inverse, for tests and for computing load bases.
  std::optional<uint64_t> vaddr_to_file_offset(uint64_t vaddr) const;
  bool empty() const { return segments_.empty(); }

 private:
  struct Segment {
    uint64_t file_begin, file_end;  // [p_offset rounded down to page, p_offset + p_filesz)
    uint64_t p_offset, p_vaddr, p_filesz;
  };
  std::vector<Segment> segments_;  // executable segments only, sorted by file_begin
};

}  // namespace profcollect
