#include "collector/records/perf_attr.h"

#include <algorithm>
#include <array>
#include <string>

#include "collector/records/byte_cursor.h"
#include "collector/records/perf_abi.h"

namespace profcollect {

namespace abi = perf_abi;

unsigned PerfAttr::precise_ip() const {
  return static_cast<unsigned>((flags >> abi::kAttrPreciseIpShift) & 3);
}

PerfAttr parse_perf_attr(std::span<const uint8_t> bytes) {
  if (bytes.size() < abi::kAttrSizeVer0)
    throw RecordFormatError("perf_event_attr of " + std::to_string(bytes.size()) +
                            " bytes is shorter than the first version's 64");
  std::array<uint8_t, 256> a{};  // zero-filled: absent newer fields read as 0
  std::copy_n(bytes.begin(), std::min(bytes.size(), a.size()), a.begin());
  const uint8_t* p = a.data();

  PerfAttr out;
  out.event.type = abi::load<uint32_t>(p + abi::kAttrType);
  out.stored_size = abi::load<uint32_t>(p + abi::kAttrSize);
  out.event.config = abi::load<uint64_t>(p + abi::kAttrConfig);
  out.event.sample_period_or_freq = abi::load<uint64_t>(p + abi::kAttrSamplePeriod);
  out.event.sample_type = abi::load<uint64_t>(p + abi::kAttrSampleType);
  out.event.read_format = abi::load<uint64_t>(p + abi::kAttrReadFormat);
  out.flags = abi::load<uint64_t>(p + abi::kAttrFlags);
  out.bp_type = abi::load<uint32_t>(p + abi::kAttrBpType);
  out.bp_addr = abi::load<uint64_t>(p + abi::kAttrBpAddr);
  out.event.branch_sample_type = abi::load<uint64_t>(p + abi::kAttrBranchSampleType);
  out.sample_regs_user = abi::load<uint64_t>(p + abi::kAttrSampleRegsUser);
  out.sample_regs_intr = abi::load<uint64_t>(p + abi::kAttrSampleRegsIntr);
  out.event.freq = out.flags & abi::kAttrFlagFreq;
  out.event.sample_id_all = out.flags & abi::kAttrFlagSampleIdAll;
  return out;
}

}  // namespace profcollect
