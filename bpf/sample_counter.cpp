// The sample counter's loader: opens the skeleton, sets the program's knobs, creates both
// generations of the count map and swaps and drains them (sample_counter.h says how).
#include "bpf/sample_counter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "bpf/hash_map_drain.h"
#include "bpf/sample_counter_skeleton.h"

namespace profcollect {

namespace {

constexpr uint32_t kSlot = 0;  // the outer maps' one element

std::string errno_text(int error) { return std::strerror(error); }

// The message of a BPF call that failed with `error` while doing `what`.
BpfError bpf_error(int error, const std::string& what) {
  if (error == EPERM) {
    return BpfError(error, "loading a BPF program needs CAP_BPF and CAP_PERFMON (or root): " +
                               what + " was not permitted");
  }
  return BpfError(error, what + ": " + errno_text(error));
}

// The end of the verifier's log, where it says what it refused.
std::string log_tail(const std::vector<char>& log) {
  std::string text(log.data(), strnlen(log.data(), log.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  constexpr size_t kTail = 1500;
  if (text.size() > kTail) text = "..." + text.substr(text.size() - kTail);
  return text;
}

// libbpf prints its warnings to stderr; the loader says what failed through BpfError instead.
class QuietLibbpf {
 public:
  QuietLibbpf() : old_(libbpf_set_print(nullptr)) {}
  ~QuietLibbpf() { libbpf_set_print(old_); }

 private:
  libbpf_print_fn_t old_;
};

int create_count_map(const char* name, uint32_t key_size, uint32_t value_size, uint32_t entries) {
  const int fd = bpf_map_create(BPF_MAP_TYPE_HASH, name, key_size, value_size, entries, nullptr);
  if (fd < 0) {
    throw bpf_error(-fd, std::string("creating the BPF count map ") + name + " of " +
                             std::to_string(entries) + " entries");
  }
  return fd;
}

// The kernel's own figure for a map's memory (memlock of its fdinfo).
uint64_t map_memory(int fd) {
  std::ifstream in("/proc/self/fdinfo/" + std::to_string(fd));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("memlock:", 0) == 0) return std::stoull(line.substr(8));
  }
  return 0;
}

}  // namespace

void DrainedCounts::clear() { ips.clear(); }

SampleCounter::SampleCounter(const SampleCounterSizes& sizes, bool all_processes)
    : skeleton_(nullptr, sample_counter_bpf__destroy), sizes_(sizes) {
  QuietLibbpf quiet;
  skeleton_.reset(sample_counter_bpf__open());
  if (!skeleton_) throw bpf_error(errno, "opening the BPF sample counter");
  sample_counter_bpf* skel = skeleton_.get();
  skel->rodata->all_processes = all_processes;
  // Inside a pid namespace (a container), count by the pids the side-band records give there.
  // PROC_PID_INIT_INO (include/linux/proc_ns.h) is the initial namespace's inode.
  constexpr uint64_t kInitialPidNamespace = 0xEFFFFFFCu;
  struct stat ns {};
  if (::stat("/proc/self/ns/pid", &ns) == 0 && ns.st_ino != kInitialPidNamespace) {
    skel->rodata->pidns_dev = ns.st_dev;
    skel->rodata->pidns_ino = ns.st_ino;
  }
  if (int err = bpf_map__set_max_entries(skel->maps.targets, std::max(sizes.targets, 1u)); err) {
    throw bpf_error(-err, "sizing the BPF target set");
  }
  // Both generations of the count map, made here with their size. The first is also the
  // template the outer map is created with: kernels before 5.10 (bpf_map_meta_equal before the
  // map_meta_equal ops) refuse an inner map whose max_entries differs from the template's.
  for (int gen = 0; gen < 2; ++gen) {
    ips_.maps[gen] = create_count_map(gen ? "pc_ips_1" : "pc_ips_0", sizeof(profcollect_ip_key),
                                      sizeof(uint64_t), std::max(sizes.ip_entries, 1u));
  }
  if (int err = bpf_map__set_inner_map_fd(skel->maps.ip_generation, ips_.maps[0]); err) {
    throw bpf_error(-err, "sizing the BPF count maps");
  }
  // libbpf asks the kernel for the verifier's log only when a load fails, into this buffer.
  std::vector<char> log(256 * 1024, '\0');
  bpf_program__set_log_buf(skel->progs.count_sample, log.data(), log.size());
  if (int err = sample_counter_bpf__load(skel); err) {
    const int error = -err;
    std::string tail = log_tail(log);
    if (error != EPERM && !tail.empty()) {
      throw BpfError(error, "the kernel refused the BPF sample counter (" + errno_text(error) +
                                "); the verifier said: " + tail);
    }
    throw bpf_error(error, "loading the BPF sample counter");
  }
  bpf_program__set_log_buf(skel->progs.count_sample, nullptr, 0);

  ips_.outer = bpf_map__fd(skel->maps.ip_generation);
  install(ips_.maps[live_]);
  const uint32_t first_drain = 4096;
  ip_keys_.resize(std::min(sizes.ip_entries, first_drain));
  ip_values_.resize(ip_keys_.size());
}

SampleCounter::~SampleCounter() {
  for (bpf_link* link : links_) bpf_link__destroy(link);
}

SampleCounter::Generations::~Generations() {
  for (int fd : maps) {
    if (fd >= 0) ::close(fd);
  }
}

void SampleCounter::install(int map_fd) {
  // The kernel returns from this update once every program run that may hold the previous
  // inner map has ended (maybe_wait_bpf_programs, kernel/bpf/syscall.c).
  if (int err = bpf_map_update_elem(ips_.outer, &kSlot, &map_fd, BPF_ANY); err) {
    throw bpf_error(-err, "installing a generation of the BPF count map");
  }
}

void SampleCounter::attach(int perf_event_fd) {
  links_.reserve(links_.size() + 1);
  bpf_link* link = bpf_program__attach_perf_event(skeleton_->progs.count_sample, perf_event_fd);
  if (!link) throw bpf_error(errno, "attaching the BPF sample counter to a perf event");
  links_.push_back(link);
}

void SampleCounter::add_target(uint32_t tgid) {
  const uint8_t one = 1;
  if (int err = bpf_map_update_elem(bpf_map__fd(skeleton_->maps.targets), &tgid, &one, BPF_ANY);
      err) {
    if (-err == E2BIG) {
      throw BpfError(E2BIG, "the BPF target set is full (" + std::to_string(sizes_.targets) +
                                " processes); process " + std::to_string(tgid) + " is not counted");
    }
    throw bpf_error(-err, "adding process " + std::to_string(tgid) + " to the BPF target set");
  }
}

void SampleCounter::remove_target(uint32_t tgid) {
  const int err = bpf_map_delete_elem(bpf_map__fd(skeleton_->maps.targets), &tgid);
  if (err && -err != ENOENT) {
    throw bpf_error(-err, "removing process " + std::to_string(tgid) + " from the BPF target set");
  }
}

void SampleCounter::flip() {
  const int next = 1 - live_;
  install(ips_.maps[next]);
  live_ = next;
}

void SampleCounter::drain_idle(DrainedCounts& out) {
  out.clear();
  const int idle = 1 - live_;
  auto emit = [&](const profcollect_ip_key& k, uint64_t v) {
    out.ips.push_back({k.tgid, k.ip, v});
  };
  if (use_batch_) {
    const int err =
        drain_hash_map(ips_.maps[idle], HashMapDrainMode::Batch, ip_keys_, ip_values_, emit);
    if (err == 0) return;
    // A kernel without batch operations (524: its ENOTSUPP); what the batches did not take is
    // read key by key.
    if (err != -EINVAL && err != -ENOTSUP && err != -524)
      throw bpf_error(-err, "draining a BPF count map");
    use_batch_ = false;
  }
  if (const int err =
          drain_hash_map(ips_.maps[idle], HashMapDrainMode::KeyWalk, ip_keys_, ip_values_, emit);
      err) {
    throw bpf_error(-err, "draining a BPF count map");
  }
}

SampleCounterLosses SampleCounter::losses() const {
  const int possible = libbpf_num_possible_cpus();
  if (possible <= 0) throw bpf_error(-possible, "counting the possible CPUs");
  std::vector<uint64_t> per_cpu(possible);  // a per-CPU u64 value is 8 bytes a CPU
  const int fd = bpf_map__fd(skeleton_->maps.counters);
  auto sum = [&](uint32_t index) {
    if (int err = bpf_map_lookup_elem(fd, &index, per_cpu.data()); err) {
      throw bpf_error(-err, "reading the BPF sample counter's counters");
    }
    uint64_t total = 0;
    for (uint64_t v : per_cpu) total += v;
    return total;
  };
  SampleCounterLosses out;
  out.ips_full = sum(PROFCOLLECT_IPS_FULL);
  out.other_pid_namespace = sum(PROFCOLLECT_OTHER_PID_NAMESPACE);
  out.filtered = sum(PROFCOLLECT_FILTERED);
  return out;
}

SampleCounter::RunStats SampleCounter::run_stats() const {
  bpf_prog_info info{};
  uint32_t length = sizeof(info);
  if (int err =
          bpf_obj_get_info_by_fd(bpf_program__fd(skeleton_->progs.count_sample), &info, &length);
      err) {
    throw bpf_error(-err, "reading the BPF sample counter's statistics");
  }
  return {info.run_time_ns, info.run_cnt};
}

uint64_t SampleCounter::memory_bytes() const {
  uint64_t total = 0;
  bpf_map* map;
  bpf_object__for_each_map(map, skeleton_->obj) total += map_memory(bpf_map__fd(map));
  for (int fd : ips_.maps) {
    if (fd >= 0) total += map_memory(fd);
  }
  return total;
}

}  // namespace profcollect
