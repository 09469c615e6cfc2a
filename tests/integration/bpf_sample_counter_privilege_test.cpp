// The BPF sample counter where the machine takes something away: without the capabilities it
// fails with a message that names them, and without the kernel's BTF (/sys/kernel/btf hidden
// under an empty tmpfs in a private mount namespace) it still loads and counts, since the
// program uses UAPI types only. Each case runs in a forked child, which changes only itself.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "bpf/sample_counter.h"
#include "tests/integration/bpf_counter_support.h"

namespace profcollect::test {
namespace {

using namespace std::chrono_literals;

// Runs `body` in a forked child; returns what it wrote and its exit status.
struct ChildResult {
  int status = -1;
  std::string text;
};

ChildResult in_child(const std::function<int(std::string&)>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string text;
    int code = 99;
    try {
      code = body(text);
    } catch (const std::exception& e) {
      text += std::string("exception: ") + e.what();
    }
    (void)!::write(fds[1], text.data(), text.size());
    ::_exit(code);
  }
  ::close(fds[1]);
  ChildResult result;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buffer, sizeof(buffer))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) result.text.append(buffer, n);
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// Loads the counter in the child and reports the error it meets: 0 (with the message) when
// BpfError says EPERM.
int load_expecting_refusal(std::string& text) {
  try {
    SampleCounter counter({1024, 16}, true);
    text = "loaded";
    return 1;
  } catch (const BpfError& e) {
    text = e.what();
    return e.error == EPERM ? 0 : 2;
  }
}

void expect_names_capabilities(const ChildResult& r) {
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_NE(r.text.find("CAP_BPF"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("CAP_PERFMON"), std::string::npos) << r.text;
  std::printf("refused with: %s\n", r.text.c_str());
}

TEST(BpfSampleCounterPrivilege, AnUnprivilegedUserIsToldWhichCapabilitiesItNeeds) {
  if (auto reason = sample_counter_unavailable()) GTEST_SKIP() << *reason;
  const ChildResult r = in_child([](std::string& text) {
    // nobody: setuid from root drops every capability.
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) {
      text = "could not become nobody";
      return 3;
    }
    return load_expecting_refusal(text);
  });
  expect_names_capabilities(r);
}

TEST(BpfSampleCounterPrivilege, RootWithoutBpfPerfmonAndSysAdminIsToldWhichCapabilitiesItNeeds) {
  if (auto reason = sample_counter_unavailable()) GTEST_SKIP() << *reason;
  const ChildResult r = in_child([](std::string& text) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (::syscall(SYS_capget, &header, data) != 0) return 3;
    for (int cap : {CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN}) {
      data[cap / 32].effective &= ~(1u << (cap % 32));
      data[cap / 32].permitted &= ~(1u << (cap % 32));
      data[cap / 32].inheritable &= ~(1u << (cap % 32));
    }
    if (::syscall(SYS_capset, &header, data) != 0) {
      text = "capset failed";
      return 3;
    }
    return load_expecting_refusal(text);
  });
  expect_names_capabilities(r);
}

TEST(BpfSampleCounterPrivilege, LoadsAndCountsWithoutTheKernelsBtf) {
  if (auto reason = sample_counter_unavailable()) GTEST_SKIP() << *reason;
  const ChildResult r = in_child([](std::string& text) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", "/sys/kernel/btf", "tmpfs", 0, nullptr) != 0) {
      text = std::string("could not hide /sys/kernel/btf: ") + std::strerror(errno);
      return 3;
    }
    if (::access("/sys/kernel/btf/vmlinux", F_OK) == 0) {
      text = "/sys/kernel/btf/vmlinux is still there";
      return 3;
    }
    BpfRunStatistics stats;
    SampleCounter counter({1024, 16}, true);
    ClockEvents events(1000000);
    for (int fd : events.fds()) counter.attach(fd);
    SpinningChild busy;
    events.enable();
    std::this_thread::sleep_for(300ms);
    events.disable();
    DrainedCounts counts;
    uint64_t drained = 0;
    for (int i = 0; i < 2; ++i) {
      counter.flip();
      counter.drain_idle(counts);
      drained += total(counts);
    }
    const uint64_t runs = counter.run_stats().run_count;
    const uint64_t lost = counter.losses().ips_full;
    text = "drained " + std::to_string(drained) + " lost " + std::to_string(lost) + " runs " +
           std::to_string(runs);
    return drained > 0 && drained + lost == runs ? 0 : 4;
  });
  EXPECT_EQ(r.status, 0) << r.text;
}

}  // namespace
}  // namespace profcollect::test
