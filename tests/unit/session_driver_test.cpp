// The session driver: the one event loop of the command, the kernel command and the daemon.
// Timers fire in time order and repeat until cancelled (also from their own handler), stop()
// ends the loop, a descriptor that becomes readable runs its handler and is never closed by the
// driver, and a signal it reads stays pending (visible to long work) until the loop reads it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "collector/session/session_driver.h"

namespace profcollect {
namespace {

using namespace std::chrono_literals;

TEST(SessionDriver, TimersFireInTimeOrderAndARepeatingOneRunsUntilCancelled) {
  SessionDriver driver({SIGUSR2});
  std::vector<std::string> seen;
  int ticks = 0;
  SessionDriver::TimerId repeating = 0;
  repeating = driver.every(5ms, [&] {
    seen.push_back("tick");
    if (++ticks < 3) return;
    driver.cancel(repeating);  // from its own handler
    // A tick that survived its cancellation would come 5 ms from now, before this.
    driver.after(20ms, [&] {
      seen.push_back("end");
      driver.stop();
    });
  });
  driver.after(1ms, [&] { seen.push_back("early"); });
  driver.run();
  EXPECT_EQ(seen, (std::vector<std::string>{"early", "tick", "tick", "tick", "end"}));
  EXPECT_TRUE(driver.stopped());
}

TEST(SessionDriver, StopCancelsEveryTimerAndTheLoopReturns) {
  SessionDriver driver({SIGUSR2});
  int fired = 0;
  driver.every(1h, [&] { ++fired; });
  driver.after(1h, [&] { ++fired; });
  driver.after(1ms, [&] { driver.stop(); });
  const auto began = std::chrono::steady_clock::now();
  driver.run();
  EXPECT_EQ(fired, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - began, 30min);  // it returned at all
}

TEST(SessionDriver, AReadableDescriptorRunsItsHandlerAndStaysTheCallers) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
  {
    SessionDriver driver({SIGUSR2});
    int readable = 0;
    driver.watch({fds[0]}, [&] {
      char c;
      while (::read(fds[0], &c, 1) == 1) {
      }
      // The second byte is written once the first is read: the driver must listen again.
      if (++readable == 1) ASSERT_EQ(::write(fds[1], "b", 1), 1);
      if (readable == 2) driver.stop();
    });
    driver.after(1ms, [&] { ASSERT_EQ(::write(fds[1], "a", 1), 1); });
    driver.run();
    EXPECT_EQ(readable, 2);
  }
  // Not closed by the driver: still a valid descriptor.
  EXPECT_EQ(::fcntl(fds[0], F_GETFD), FD_CLOEXEC);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(SessionDriver, UnwatchedDescriptorsRunNothing) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
  SessionDriver driver({SIGUSR2});
  int readable = 0;
  driver.watch({fds[0]}, [&] { ++readable; });
  driver.unwatch();
  ASSERT_EQ(::write(fds[1], "a", 1), 1);
  driver.after(30ms, [&] { driver.stop(); });
  driver.run();
  EXPECT_EQ(readable, 0);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(SessionDriver, ASignalStaysPendingUntilTheLoopReadsIt) {
  SessionDriver driver({SIGUSR1});
  EXPECT_FALSE(driver.signal_pending(SIGUSR1));
  ASSERT_EQ(::raise(SIGUSR1), 0);  // blocked: pending, not delivered
  EXPECT_TRUE(driver.signal_pending(SIGUSR1));
  EXPECT_FALSE(driver.signal_pending(SIGUSR2));  // not the driver's
  std::vector<int> read;
  driver.on_signal([&](int sig) {
    read.push_back(sig);
    driver.stop();
  });
  driver.run();
  EXPECT_EQ(read, std::vector<int>{SIGUSR1});
  EXPECT_FALSE(driver.signal_pending(SIGUSR1));
}

}  // namespace
}  // namespace profcollect
