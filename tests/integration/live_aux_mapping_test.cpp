// MappedRingBuffer's AUX mapping on this machine's kernel. No PMU here writes AUX data (no Intel
// PT, no Arm SPE), so no AUX byte can be read; what can be checked is that the mapping gets past
// every check the kernel makes of the AUX layout (aux_offset at or after the data area and equal
// to the mmap offset, aux_size equal to the mapping's length, a power of two of pages), which
// answer EINVAL, to the only one left for a software event: that its PMU has no AUX support
// (rb_alloc_aux: EOPNOTSUPP). The same event given a wrong aux_offset by hand gets EINVAL, so the
// two answers do tell a good layout from a bad one.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "collector/live/ring_buffer.h"

namespace profcollect {
namespace {

class LiveAuxMapping : public ::testing::Test {
 protected:
  void SetUp() override {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = 1000000;
    attr.sample_type = PERF_SAMPLE_IP;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    fd_ = static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd_ < 0)
      GTEST_SKIP() << "perf_event_open of cpu-clock for this thread: " << std::strerror(errno);
    page_ = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
  }

  int fd_ = -1;
  size_t page_ = 0;
};

TEST_F(LiveAuxMapping, KernelTakesTheLayoutAndRefusesOnlyForLackOfAnAuxPmu) {
  // By hand, a layout the kernel must refuse: aux_offset inside the data area.
  {
    const size_t data = 2 * page_;
    void* m = ::mmap(nullptr, data, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    ASSERT_NE(m, MAP_FAILED) << std::strerror(errno);
    auto* control = static_cast<perf_event_mmap_page*>(m);
    control->aux_offset = page_;
    control->aux_size = page_;
    errno = 0;
    void* aux =
        ::mmap(nullptr, page_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(page_));
    const int err = errno;
    EXPECT_EQ(aux, MAP_FAILED);
    EXPECT_EQ(err, EINVAL) << "a wrong aux_offset: " << std::strerror(err);
    if (aux != MAP_FAILED) ::munmap(aux, page_);
    ::munmap(m, data);
  }
  // MappedRingBuffer's layout: past every layout check, refused by the PMU.
  try {
    MappedRingBuffer rb(fd_, 1, 1);
    ADD_FAILURE() << "cpu-clock accepted an AUX area";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EOPNOTSUPP) << e.what();
    EXPECT_NE(std::string(e.what()).find("AUX area"), std::string::npos) << e.what();
  }
  // A data area alone is still mapped as before, and the failed AUX attempt left nothing behind.
  MappedRingBuffer plain(fd_, 1);
  EXPECT_FALSE(plain.has_aux());
  EXPECT_EQ(plain.reader().data_size(), page_);
}

TEST_F(LiveAuxMapping, AuxPagesMustBeAPowerOfTwo) {
  EXPECT_THROW(MappedRingBuffer(fd_, 1, 3), std::invalid_argument);
}

}  // namespace
}  // namespace profcollect
