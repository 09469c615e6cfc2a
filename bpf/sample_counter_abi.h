// The layout shared by the sample counter's BPF program (sample_counter.bpf.c) and its loader
// (sample_counter.cpp): the key of the count map and the indexes of the per-CPU counters of what
// was not counted. UAPI types only, so that the BPF build needs neither vmlinux.h nor the
// kernel's BTF. The key is padded explicitly: the kernel hashes all key bytes, so a hole left to
// the compiler would make equal keys differ.
#pragma once

#include <linux/types.h>

struct profcollect_ip_key {
  __u32 tgid;
  __u32 pad;  // zero
  __u64 ip;
};

// Indexes into the per-CPU `counters` array.
enum profcollect_loss_counter {
  PROFCOLLECT_IPS_FULL = 0,             // an ip count could not be stored (map full, busy)
  PROFCOLLECT_FILTERED = 1,             // a sample of a process that is not a target
  PROFCOLLECT_OTHER_PID_NAMESPACE = 2,  // a sample of a process outside the loader's pid namespace
  PROFCOLLECT_COUNTERS = 3,
};
