// The sample counter: a perf_event program run on every overflow of a sampling event. Instead of
// the kernel writing the sample into a ring buffer for user space to decode, it counts the
// sample in a map that user space drains, by (tgid, ip). It returns 0, so the sample is not also
// written out. (Branch stacks are not counted: the BPF engine refuses them, engine = perf takes
// them.)
//
// Two generations. The count map is reached through an array-of-maps outer map of one element;
// user space swaps in a spare inner map, and the kernel's update of a map-in-map element waits
// for every running (non-sleepable) program to finish (synchronize_rcu in
// maybe_wait_bpf_programs, kernel/bpf/syscall.c). Once the swap returns, no run can still hold
// the retired inner map, so user space reads and clears it without racing this program: no
// count is lost or counted twice between generations.
//
// UAPI types only (no vmlinux.h, no CO-RE): the build and the load need no kernel BTF.
#include <stdbool.h>

#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/errno.h>
#include <linux/perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/sample_counter_abi.h"

// The kernel offers tracing helpers to programs under a GPL-compatible license only.
char LICENSE[] SEC("license") = "Dual BSD/GPL";

// Set by the loader before the load; the verifier drops the code they turn off.
const volatile bool all_processes = false;
// The loader's pid namespace (the device and inode of its /proc/self/ns/pid), when it is not the
// initial one: then processes are known to it (and in its side-band records) by their pids in
// that namespace, which bpf_get_current_pid_tgid does not give. 0: the initial namespace.
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

// The processes to count (tgid -> 1) unless all_processes; max_entries set by the loader.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u8);
} targets SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, PROFCOLLECT_COUNTERS);
  __type(key, __u32);
  __type(value, __u64);
} counters SEC(".maps");

// The live generation of the count map. The inner maps are created by the loader, which also
// sets the template's max_entries to theirs (Linux 5.10 and later do not compare a hash map's
// max_entries, older kernels do). The template gives the key and value sizes the verifier
// checks against: sizes, not BTF types, since the inner maps carry no BTF, and clang leaves a
// type used only here as a forward declaration, which libbpf cannot size.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 1);
  __type(key, __u32);
  // libbpf's map-in-map declaration reads best as the struct it is.
  // clang-format off
  __array(values, struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1);
    __uint(key_size, sizeof(struct profcollect_ip_key));
    __uint(value_size, sizeof(__u64));
  });
  // clang-format on
} ip_generation SEC(".maps");

static __always_inline void bump(__u32 counter) {
  __u64* value = bpf_map_lookup_elem(&counters, &counter);
  // Per-CPU, and a perf_event program never nests on its CPU (bpf_prog_active): no atomic.
  if (value) *value += 1;
}

// Adds `count` to the u64 value of `key`, inserting it when absent. Another CPU may insert the
// same key between the lookup and the insert: then BPF_NOEXIST fails with EEXIST and the value
// it inserted takes the add. False when the map has no room (or is busy): a loss.
static __always_inline bool add_u64(void* map, const void* key, __u64 count) {
  __u64* value = bpf_map_lookup_elem(map, key);
  if (value) {
    __sync_fetch_and_add(value, count);
    return true;
  }
  long err = bpf_map_update_elem(map, key, &count, BPF_NOEXIST);
  if (err == 0) return true;
  if (err != -EEXIST) return false;
  value = bpf_map_lookup_elem(map, key);
  if (!value) return false;
  __sync_fetch_and_add(value, count);
  return true;
}

// The interrupted process's tgid as the loader knows it; false for a process of another pid
// namespace (the helper answers only for processes of the namespace named).
static __always_inline bool current_tgid(__u32* tgid) {
  if (!pidns_ino) {
    *tgid = bpf_get_current_pid_tgid() >> 32;
    return true;
  }
  struct bpf_pidns_info ns = {};
  if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns))) return false;
  *tgid = ns.tgid;
  return true;
}

SEC("perf_event")
int count_sample(struct bpf_perf_event_data* ctx) {
  __u32 tgid = 0;
  if (!current_tgid(&tgid)) {
    bump(PROFCOLLECT_OTHER_PID_NAMESPACE);
    return 0;
  }
  if (!all_processes && !bpf_map_lookup_elem(&targets, &tgid)) {
    bump(PROFCOLLECT_FILTERED);
    return 0;
  }
  __u32 zero = 0;
  // The loader installs every generation before it can attach the program, so the slot is
  // never empty; the check is the verifier's.
  void* ips = bpf_map_lookup_elem(&ip_generation, &zero);
  struct profcollect_ip_key key = {.tgid = tgid, .ip = PT_REGS_IP(&ctx->regs)};
  if (!ips || !add_u64(ips, &key, 1)) bump(PROFCOLLECT_IPS_FULL);
  return 0;
}
