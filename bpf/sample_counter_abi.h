// The layout shared by the sample counter's BPF program (sample_counter.bpf.c) and its loader
// (sample_counter.cpp): the keys and values of the count maps and the indexes of the per-CPU
// per-CPU counters of what was not counted. UAPI types only, so that the BPF build needs neither vmlinux.h nor the
// kernel's BTF. Every key is padded explicitly: the kernel hashes all key bytes, so a hole left
// to the compiler would make equal keys differ.
#pragma once

#include <linux/types.h>

// Entries of a branch stack the program reads per sample: the largest LBR depth (Intel
// Arch LBR, AMD LbrExtV2 and Arm BRBE have at most 32, 16 and 64; BRBE beyond 32 is cut).
#define PROFCOLLECT_MAX_BRANCH_ENTRIES 32

struct profcollect_ip_key {
  __u32 tgid;
  __u32 pad;  // zero
  __u64 ip;
};

struct profcollect_branch_key {
  __u32 tgid;
  __u32 pad;  // zero
  __u64 from;
  __u64 to;
};

struct profcollect_branch_value {
  __u64 count;
  __u64 mispredicted;
};

// A fall-through range: the code run from `start` (the target of the older taken branch) to
// `end` (the source of the newer one), both inclusive addresses of instructions.
struct profcollect_range_key {
  __u32 tgid;
  __u32 pad;  // zero
  __u64 start;
  __u64 end;
};

// Indexes into the per-CPU `counters` array.
enum profcollect_loss_counter {
  PROFCOLLECT_IPS_FULL = 0,          // an ip count could not be stored (map full, busy)
  PROFCOLLECT_BRANCHES_FULL = 1,     // a taken-branch count could not be stored
  PROFCOLLECT_RANGES_FULL = 2,       // a range count could not be stored
  PROFCOLLECT_BRANCH_READS_FAILED = 3,  // bpf_read_branch_records failed (no branch stack)
  PROFCOLLECT_FILTERED = 4,          // a sample of a process that is not a target
  PROFCOLLECT_OTHER_PID_NAMESPACE = 5,  // a sample of a process outside the loader's pid namespace
  PROFCOLLECT_COUNTERS = 6,
};
