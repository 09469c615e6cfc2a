// The on-disk and kernel ABI facts of perf.data that the reader needs: record types, sample_type
// and read_format bits, header misc bits, feature ids, and the layout of the file header and of
// perf_event_attr. Sources: include/uapi/linux/perf_event.h, tools/lib/perf/include/perf/event.h
// and tools/perf/Documentation/perf.data-file-format.txt. Everything on disk is little-endian
// (the reader rejects big-endian files), read field by field with memcpy, never cast in place.
#pragma once

#include <cstdint>
#include <cstring>

namespace profcollect::perf_abi {

// ---- magic and header sizes ------------------------------------------------------------------

inline constexpr uint64_t kMagicV2 = 0x32454c4946524550ULL;         // "PERFILE2" read as LE u64
inline constexpr uint64_t kMagicV2Swapped = 0x50455246494c4532ULL;  // same bytes, big-endian file
inline constexpr uint64_t kMagicV1 = 0x454c494646524550ULL;  // "PERFFILE": perf before 2.6.38
inline constexpr uint64_t kPipeHeaderSize = 16;              // magic + size
inline constexpr uint64_t kFileHeaderSize = 104;             // with the feature bitmap
inline constexpr uint64_t kFileHeaderSizeNoFeatures = 72;    // before adds_features existed
inline constexpr uint64_t kEventHeaderSize = 8;              // struct perf_event_header
inline constexpr unsigned kFeatureBits = 256;                // HEADER_FEAT_BITS

// perf_file_header field offsets.
inline constexpr size_t kFhMagic = 0, kFhSize = 8, kFhAttrSize = 16, kFhAttrs = 24, kFhData = 40,
                        kFhEventTypes = 56, kFhFeatures = 72;

// ---- record types ----------------------------------------------------------------------------

enum RecordType : uint32_t {
  kMmap = 1,
  kLost = 2,
  kComm = 3,
  kExit = 4,
  kThrottle = 5,
  kUnthrottle = 6,
  kFork = 7,
  kRead = 8,
  kSample = 9,
  kMmap2 = 10,
  kAux = 11,
  kItraceStart = 12,
  kLostSamples = 13,
  kSwitch = 14,
  kSwitchCpuWide = 15,
  kNamespaces = 16,
  kKsymbol = 17,
  kBpfEvent = 18,
  kCgroup = 19,
  kTextPoke = 20,
  kAuxOutputHwId = 21,
  // Types from 64 on are written by perf itself, never by the kernel.
  kUserTypeStart = 64,
  kHeaderAttr = 64,
  kHeaderEventType = 65,
  kHeaderTracingData = 66,
  kHeaderBuildId = 67,
  kFinishedRound = 68,
  kIdIndex = 69,
  kAuxtraceInfo = 70,
  kAuxtrace = 71,
  kAuxtraceError = 72,
  kThreadMap = 73,
  kCpuMap = 74,
  kStatConfig = 75,
  kStat = 76,
  kStatRound = 77,
  kEventUpdate = 78,
  kTimeConv = 79,
  kHeaderFeature = 80,
  kCompressed = 81,
  kFinishedInit = 82,
  kCompressed2 = 83,  // perf 6.15+: like kCompressed with a data_size field and 8-byte padding
};

// ---- perf_event_header.misc ------------------------------------------------------------------

inline constexpr uint16_t kMiscCpumodeMask = 7;
inline constexpr uint16_t kMiscMmapData = 1 << 13;     // MMAP: not executable
inline constexpr uint16_t kMiscCommExec = 1 << 13;     // COMM: caused by exec
inline constexpr uint16_t kMiscExactIp = 1 << 14;      // SAMPLE: ip is exact (precise_ip)
inline constexpr uint16_t kMiscMmapBuildId = 1 << 14;  // MMAP2: carries a build-id
inline constexpr uint16_t kMiscBuildIdSize = 1 << 15;  // HEADER_BUILD_ID: size byte is valid

// ---- sample_type -----------------------------------------------------------------------------

enum SampleType : uint64_t {
  kSampleIp = 1ULL << 0,
  kSampleTid = 1ULL << 1,
  kSampleTime = 1ULL << 2,
  kSampleAddr = 1ULL << 3,
  kSampleRead = 1ULL << 4,
  kSampleCallchain = 1ULL << 5,
  kSampleId = 1ULL << 6,
  kSampleCpu = 1ULL << 7,
  kSamplePeriod = 1ULL << 8,
  kSampleStreamId = 1ULL << 9,
  kSampleRaw = 1ULL << 10,
  kSampleBranchStack = 1ULL << 11,
  kSampleRegsUser = 1ULL << 12,
  kSampleStackUser = 1ULL << 13,
  kSampleWeight = 1ULL << 14,
  kSampleDataSrc = 1ULL << 15,
  kSampleIdentifier = 1ULL << 16,
  kSampleTransaction = 1ULL << 17,
  kSampleRegsIntr = 1ULL << 18,
  kSamplePhysAddr = 1ULL << 19,
  kSampleAux = 1ULL << 20,
  kSampleCgroup = 1ULL << 21,
  kSampleDataPageSize = 1ULL << 22,
  kSampleCodePageSize = 1ULL << 23,
  kSampleWeightStruct = 1ULL << 24,
};

// The sample_type bits that make up the sample_id_all trailer of non-sample records; events
// whose records share a ring buffer or a file must agree on them.
inline constexpr uint64_t kSampleIdTrailerBits =
    kSampleTid | kSampleTime | kSampleId | kSampleStreamId | kSampleCpu | kSampleIdentifier;

// read_format
inline constexpr uint64_t kFormatTotalTimeEnabled = 1 << 0;
inline constexpr uint64_t kFormatTotalTimeRunning = 1 << 1;
inline constexpr uint64_t kFormatId = 1 << 2;
inline constexpr uint64_t kFormatGroup = 1 << 3;
inline constexpr uint64_t kFormatLost = 1 << 4;

// branch_sample_type bits that change the sample layout.
inline constexpr uint64_t kBranchHwIndex = 1ULL << 17;
inline constexpr uint64_t kBranchCounters = 1ULL << 19;  // perf 6.8+: one u64 per entry after them

// ---- perf_event_attr -------------------------------------------------------------------------

inline constexpr uint32_t kAttrSizeVer0 = 64;  // attr.size 0 in old files means this
// perf rejects attrs larger than its own struct (136 bytes in 2024); allow room for growth.
inline constexpr uint32_t kMaxAttrSize = 1024;
inline constexpr size_t kAttrType = 0, kAttrSize = 4, kAttrConfig = 8, kAttrSamplePeriod = 16,
                        kAttrSampleType = 24, kAttrReadFormat = 32, kAttrFlags = 40,
                        kAttrBpType = 52, kAttrBpAddr = 56, kAttrBranchSampleType = 72,
                        kAttrSampleRegsUser = 80, kAttrSampleRegsIntr = 96;

// Bits of the u64 flag word at kAttrFlags.
inline constexpr uint64_t kAttrFlagExcludeUser = 1ULL << 4;
inline constexpr uint64_t kAttrFlagExcludeKernel = 1ULL << 5;
inline constexpr uint64_t kAttrFlagExcludeHv = 1ULL << 6;
inline constexpr uint64_t kAttrFlagFreq = 1ULL << 10;
inline constexpr unsigned kAttrPreciseIpShift = 15;  // 2 bits
inline constexpr uint64_t kAttrFlagSampleIdAll = 1ULL << 18;
inline constexpr uint64_t kAttrFlagExcludeHost = 1ULL << 19;
inline constexpr uint64_t kAttrFlagExcludeGuest = 1ULL << 20;

enum AttrTypeId : uint32_t {
  kTypeHardware = 0,
  kTypeSoftware = 1,
  kTypeTracepoint = 2,
  kTypeHwCache = 3,
  kTypeRaw = 4,
  kTypeBreakpoint = 5,
};

// ---- feature sections (HEADER_* bit numbers) -------------------------------------------------

enum Feature : unsigned {
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatPmuMappings = 16,
};

// EVENT_UPDATE record kinds.
inline constexpr uint64_t kEventUpdateName = 2;

// Build-id record (HEADER_BUILD_ID and the build-id feature section): header, pid, 24 bytes of
// id (20 of data + size byte when kMiscBuildIdSize), then the NUL-terminated filename.
inline constexpr size_t kBuildIdRecordPid = 8, kBuildIdRecordData = 12, kBuildIdRecordSizeByte = 32,
                        kBuildIdRecordFilename = 36;

// ---- little-endian loads ---------------------------------------------------------------------

template <typename T>
inline T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace profcollect::perf_abi
