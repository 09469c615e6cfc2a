// SampleResolver: every sample ends mapped or under a named reason.
#include "mapper/sample_resolver.h"

#include <gtest/gtest.h>

namespace profcollect {
namespace {

// The layout ld.lld gives a small PIE: four PT_LOADs whose file offsets share one page, the
// executable one at file offset 0x5f0 mapped at vaddr 0x15f0.
std::vector<LoadSegment> lld_segments() {
  return {
      {0x0, 0x5f0, 0x0, 0x5f0, 0x1000, 4 /*R*/},
      {0x15f0, 0x1a0, 0x5f0, 0x1a0, 0x1000, 5 /*R+X*/},
      {0x2790, 0x1f0, 0x790, 0x1f0, 0x1000, 6 /*RW*/},
      {0x3980, 0x30, 0x980, 0x30, 0x1000, 6 /*RW*/},
  };
}

MmapRecord map(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff, std::string_view file,
               bool exec) {
  MmapRecord r;
  r.pid = r.tid = pid;
  r.start = start;
  r.len = len;
  r.pgoff = pgoff;
  r.filename = file;
  r.executable = exec;
  r.is_mmap2 = true;
  return r;
}

class SampleResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The loader maps the file's page 0 four times, once per segment, at load base 0x555555554000.
    processes_.on_mmap(map(7, 0x555555554000, 0x1000, 0, "/x/hot", false));
    processes_.on_mmap(map(7, 0x555555555000, 0x1000, 0, "/x/hot", true));
    processes_.on_mmap(map(7, 0x555555556000, 0x1000, 0, "/x/hot", false));
    processes_.on_mmap(map(7, 0x7f0000000000, 0x10000, 0, "/lib/libc.so.6", true));
    processes_.on_mmap(map(7, 0x7f1000000000, 0x10000, 0, "//anon", true));
  }
  ProcessTable processes_;
  BinaryMatcher matcher_{"/x/hot", BuildId(), false, nullptr};
  ExecSegmentMap segments_{lld_segments()};
  SampleResolver resolver_{processes_, matcher_, segments_};
};

TEST_F(SampleResolverTest, InstructionInTheExecutableMappingGetsItsVaddr) {
  // Runtime 0x555555555600 -> file offset 0x600 -> in the R+X segment -> vaddr 0x1600.
  auto r = resolver_.resolve(7, 0x555555555600, CpuMode::User);
  EXPECT_EQ(r.outcome, SampleOutcome::Mapped);
  EXPECT_EQ(r.vaddr, 0x1600u);
}

TEST_F(SampleResolverTest, EveryOtherCaseHasItsReason) {
  EXPECT_EQ(resolver_.resolve(7, 0x555555554600, CpuMode::User).outcome, SampleOutcome::NotExecutable);
  // In the executable mapping, but at a file offset no PF_X segment holds.
  EXPECT_EQ(resolver_.resolve(7, 0x555555555800, CpuMode::User).outcome, SampleOutcome::NotExecutable);
  EXPECT_EQ(resolver_.resolve(7, 0x7f0000000100, CpuMode::User).outcome, SampleOutcome::OtherBinary);
  EXPECT_EQ(resolver_.resolve(7, 0x7f1000000100, CpuMode::User).outcome, SampleOutcome::AnonOrJit);
  EXPECT_EQ(resolver_.resolve(7, 0x1000, CpuMode::User).outcome, SampleOutcome::NoMapping);
  EXPECT_EQ(resolver_.resolve(8, 0x555555555600, CpuMode::User).outcome, SampleOutcome::NoMapping);
  EXPECT_EQ(resolver_.resolve(7, 0xffffffff81000000, CpuMode::Kernel).outcome, SampleOutcome::Kernel);
}

}  // namespace
}  // namespace profcollect
