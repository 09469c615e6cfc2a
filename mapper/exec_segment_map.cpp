#include "mapper/exec_segment_map.h"

#include <algorithm>

namespace profcollect {

ExecSegmentMap::ExecSegmentMap(const std::vector<LoadSegment>& segments, uint64_t page_size) {
  // A page size that is not a power of two would make the rounding meaningless; fall back to
  // no rounding rather than guessing.
  const uint64_t page_mask =
      (page_size != 0 && (page_size & (page_size - 1)) == 0) ? ~(page_size - 1) : ~uint64_t{0};
  for (const LoadSegment& seg : segments) {
    if (!seg.executable() || seg.filesz == 0) continue;
    segments_.push_back(Segment{seg.offset & page_mask, seg.offset + seg.filesz, seg.offset,
                                seg.vaddr, seg.filesz});
  }
  std::sort(segments_.begin(), segments_.end(),
            [](const Segment& a, const Segment& b) { return a.file_begin < b.file_begin; });
}

std::optional<uint64_t> ExecSegmentMap::file_offset_to_vaddr(uint64_t file_offset) const {
  const std::optional<Run> run = file_run(file_offset);
  if (!run) return std::nullopt;
  return file_offset - run->begin + run->target;
}

std::optional<ExecSegmentMap::Run> ExecSegmentMap::file_run(uint64_t file_offset) const {
  // Executable segments are few (one or two): a scan is cheaper than anything cleverer. A
  // segment that holds the offset within its own bytes wins over one that only reaches it
  // through the page rounding, so two executable segments sharing a page stay apart.
  const Segment* rounded_match = nullptr;
  for (const Segment& seg : segments_) {
    if (file_offset >= seg.p_offset && file_offset < seg.file_end) {
      return Run{seg.p_offset, seg.file_end, seg.p_vaddr};
    }
    if (rounded_match == nullptr && file_offset >= seg.file_begin && file_offset < seg.file_end) {
      rounded_match = &seg;
    }
  }
  if (rounded_match == nullptr) return std::nullopt;
  // Below p_offset but in the segment's first page: the bytes the kernel maps along with it
  // (another segment's own bytes may lie there too: the offset alone is the run).
  return Run{file_offset, file_offset + 1,
             rounded_match->p_vaddr - (rounded_match->p_offset - file_offset)};
}

std::optional<uint64_t> ExecSegmentMap::vaddr_to_file_offset(uint64_t vaddr) const {
  const std::optional<Run> run = vaddr_run(vaddr);
  if (!run) return std::nullopt;
  return vaddr - run->begin + run->target;
}

std::optional<ExecSegmentMap::Run> ExecSegmentMap::vaddr_run(uint64_t vaddr) const {
  for (const Segment& seg : segments_) {
    if (vaddr >= seg.p_vaddr && vaddr - seg.p_vaddr < seg.p_filesz) {
      return Run{seg.p_vaddr, seg.p_vaddr + seg.p_filesz, seg.p_offset};
    }
  }
  return std::nullopt;
}

}  // namespace profcollect
