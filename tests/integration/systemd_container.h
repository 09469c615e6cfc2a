// A Debian 12 system with systemd as PID 1, for testing the service as it runs on a user's host:
// the machine that runs the tests has systemd installed but not running. The tree is made once per
// machine by debootstrap and cached outside the source and build trees; each test boots it under
// systemd-nspawn with a tmpfs overlay (so no test changes the cached tree or sees another test's
// files), installs the build into it, talks to it through nsenter, and powers it off.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"

namespace profcollect::test {

enum class ContainerTreeState { ready, unavailable, failed };

struct ContainerTree {
  ContainerTreeState state = ContainerTreeState::failed;
  std::string message;  // why not ready
  std::filesystem::path root;
  std::chrono::milliseconds made_in{0};  // time spent making or completing it in this process
};

// The cached tree (PROFCOLLECT_TEST_CACHE, default /var/cache/profcollect-tests, + "/bookworm"),
// made by `debootstrap --variant=minbase --include=systemd,dbus,procps,...` from the mirror of
// apt's own sources on this machine (or PROFCOLLECT_TEST_MIRROR), with the Debian packages that
// hold the shared libraries the build's profcollect links (found by ldd and dpkg). The first call of a process makes it if it is
// missing, or adds the packages a newer build needs, under a file lock in the cache (parallel test
// processes wait for one another); a stamp written last marks it complete. unavailable: not root,
// or debootstrap cannot reach the mirror (the message says which); failed: anything else.
const ContainerTree& bookworm_tree();

// For a test's SetUp: skips where the tree is unavailable, fails where making it failed.
void require_bookworm_tree();

class SystemdContainer {
 public:
  // Boots `tree` (read-only, under a tmpfs overlay) with the options perf_event_open needs
  // inside (every capability, perf_event_open and bpf allowed) and returns once
  // `systemctl is-system-running` says running or degraded. Throws std::runtime_error with the
  // console output when it does not within `boot_timeout`.
  explicit SystemdContainer(const std::filesystem::path& tree,
                            std::chrono::seconds boot_timeout = std::chrono::seconds(180));
  // `systemctl poweroff` and a wait for systemd-nspawn; killed when it does not end in time.
  ~SystemdContainer();
  SystemdContainer(const SystemdContainer&) = delete;
  SystemdContainer& operator=(const SystemdContainer&) = delete;

  // The container's PID 1 as the host sees it, and its root directory from the host.
  pid_t leader() const { return leader_; }
  std::filesystem::path root() const;
  std::chrono::milliseconds booted_in() const { return booted_in_; }

  // `nsenter -t LEADER -a ARGV...`: runs a command inside, in every namespace of the container.
  CommandResult run(const std::vector<std::string>& argv,
                    std::chrono::seconds timeout = std::chrono::seconds(120)) const;

  // `DESTDIR=ROOT cmake --install BUILD --prefix /usr`, then systemd-sysusers (the unit's user)
  // and `systemctl daemon-reload` inside; throws std::runtime_error naming what failed.
  void install_build(const std::filesystem::path& build_dir) const;

  // The console output and the journal of this boot, for the message of a failed assertion.
  std::string diagnostics() const;

 private:
  void power_off();

  pid_t nspawn_ = -1;
  pid_t leader_ = -1;
  TempDir log_dir_;
  std::chrono::milliseconds booted_in_{0};
};

}  // namespace profcollect::test
