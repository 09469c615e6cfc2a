// IntervalAttribution: counts drained at an interval's end, with no time of their own, are
// attributed to the file mapped at their address only when one mapping (one file at one load
// base) covered the address during the whole interval. Each case builds the records of one
// interval in time order (the kernel's layouts, as record/record.h holds them), then the counts,
// and checks where each count went (samples per mapped file, unmapped) and which were counted
// ambiguous. The expected placements follow from the records alone.
#include <gtest/gtest.h>

#include <deque>
#include <string>

#include "collector/pipeline/interval_attribution.h"
#include "tests/support/mmap_records.h"

namespace profcollect {
namespace {

class NoImages : public ImageSelector {
 public:
  ImageChoice choose(uint32_t, const Mapping&, const Dso&) override { return {}; }
};

class AttributionTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kTime = 1000;

  MmapRecord mmap(uint32_t pid, uint64_t start, uint64_t len, const std::string& path,
                  uint64_t pgoff = 0, bool executable = true) {
    names_.push_back(path);
    MmapRecord m = user_mmap(pid, start, len, pgoff, names_.back(), executable);
    m.ino = std::hash<std::string>{}(path);
    return m;
  }
  static CommRecord exec(uint32_t pid) {
    CommRecord c;
    c.pid = c.tid = pid;
    c.exec = true;
    c.comm = "new";
    return c;
  }
  static TaskRecord fork(uint32_t pid, uint32_t ppid) {
    TaskRecord t;
    t.pid = t.tid = pid;
    t.ppid = t.ptid = ppid;
    return t;
  }
  static TaskRecord exit(uint32_t pid) {
    TaskRecord t = fork(pid, pid);
    t.is_exit = true;
    t.ppid = t.ptid = 1;
    return t;
  }
  void apply(const Record& r) { attribution_.consume(pipeline_, r); }
  void count(uint32_t tgid, uint64_t ip, uint64_t n) {
    attribution_.add_count(pipeline_, tgid, ip, n, kTime);
  }
  void end() { attribution_.end_interval(pipeline_); }
  // Samples counted in the file at `path`.
  uint64_t in(const std::string& path) const {
    uint64_t n = 0;
    for (const auto& [dso, samples] : pipeline_.counts().per_dso) {
      if (pipeline_.processes().dso(dso).path == path) n += samples;
    }
    return n;
  }
  uint64_t ambiguous() const { return attribution_.counts().ambiguous; }

  std::deque<std::string> names_;
  NoImages selector_;
  SamplePipeline pipeline_{selector_, PipelineOptions{}};
  IntervalAttribution attribution_;
};

TEST_F(AttributionTest, AnUnchangedProcessIsResolvedAndANewMappingOverNothingIsNoChange) {
  apply(mmap(10, 0x400000, 0x1000, "/bin/a"));
  end();                                                 // an earlier interval
  apply(mmap(10, 0x7f0000000000, 0x2000, "/lib/b.so"));  // dlopen during the interval
  count(10, 0x400010, 5);
  count(10, 0x7f0000001000, 3);
  count(10, 0x500000, 2);  // nothing there
  end();
  EXPECT_EQ(in("/bin/a"), 5u);
  EXPECT_EQ(in("/lib/b.so"), 3u);
  EXPECT_EQ(pipeline_.counts().no_dso, 2u);
  EXPECT_EQ(ambiguous(), 0u);
}

TEST_F(AttributionTest, CodeRemappedByAnotherFileWithinTheIntervalIsAmbiguous) {
  apply(mmap(10, 0x400000, 0x2000, "/bin/a"));
  end();
  apply(mmap(10, 0x401000, 0x1000, "/tmp/jit-code"));  // replaces a's second page
  count(10, 0x400010, 4);                              // a's first page: untouched
  count(10, 0x401010, 6);                              // a or the new file: cannot be told
  end();
  EXPECT_EQ(in("/bin/a"), 4u);
  EXPECT_EQ(in("/tmp/jit-code"), 0u);
  EXPECT_EQ(ambiguous(), 6u);
  EXPECT_EQ(attribution_.counts().ambiguous_entries, 1u);
  // The next interval: the mapping is settled, the count is the new file's.
  count(10, 0x401010, 7);
  end();
  EXPECT_EQ(in("/tmp/jit-code"), 7u);
  EXPECT_EQ(ambiguous(), 6u);
}

TEST_F(AttributionTest, TheSameFileMappedAgainAtTheSameBaseIsNoChange) {
  apply(mmap(10, 0x400000, 0x2000, "/bin/a"));
  end();
  apply(mmap(10, 0x401000, 0x1000, "/bin/a", 0x1000));  // mprotect's split: same file, same base
  count(10, 0x401010, 3);
  end();
  EXPECT_EQ(in("/bin/a"), 3u);
  EXPECT_EQ(ambiguous(), 0u);
}

TEST_F(AttributionTest, TheSameFileAtAnotherBaseIsAChange) {
  apply(mmap(10, 0x400000, 0x2000, "/bin/a"));
  end();
  apply(mmap(10, 0x400000, 0x2000, "/bin/a", 0x1000));  // another part of the file there now
  count(10, 0x400010, 3);
  end();
  EXPECT_EQ(in("/bin/a"), 0u);
  EXPECT_EQ(ambiguous(), 3u);
}

TEST_F(AttributionTest, ExecWithinTheIntervalKeepsTheNewImageAndCountsTheOldAddressesAmbiguous) {
  apply(mmap(20, 0x400000, 0x1000, "/bin/sh"));
  apply(mmap(20, 0x7f0000000000, 0x1000, "/lib/libc.so"));
  end();
  apply(exec(20));
  apply(mmap(20, 0x500000, 0x1000, "/usr/bin/work"));       // where sh was not
  apply(mmap(20, 0x7f0000000000, 0x1000, "/lib/libc.so"));  // the same libc, same base
  apply(mmap(20, 0x400000, 0x1000, "/usr/lib/other.so"));   // where sh was
  count(20, 0x500010, 10);
  count(20, 0x7f0000000010, 4);
  count(20, 0x400010, 2);  // sh before the exec, or other.so after it
  end();
  EXPECT_EQ(in("/usr/bin/work"), 10u);
  EXPECT_EQ(in("/lib/libc.so"), 4u);
  EXPECT_EQ(in("/bin/sh"), 0u);
  EXPECT_EQ(in("/usr/lib/other.so"), 0u);
  EXPECT_EQ(ambiguous(), 2u);
}

TEST_F(AttributionTest, AnAddressOnlyTheOldImageMappedIsAmbiguousAfterAnExec) {
  apply(mmap(20, 0x400000, 0x1000, "/bin/sh"));
  end();
  apply(exec(20));
  apply(mmap(20, 0x500000, 0x1000, "/usr/bin/work"));
  count(20, 0x400010, 3);  // the old image's, but its mapping is gone: never guessed
  end();
  EXPECT_EQ(in("/bin/sh"), 0u);
  EXPECT_EQ(pipeline_.counts().no_dso, 0u);
  EXPECT_EQ(ambiguous(), 3u);
}

TEST_F(AttributionTest, AProcessThatExitsWithinTheIntervalKeepsItsCounts) {
  apply(mmap(30, 0x400000, 0x1000, "/bin/short"));
  end();
  apply(exit(30));
  count(30, 0x400010, 5);
  end();
  EXPECT_EQ(in("/bin/short"), 5u);
  EXPECT_EQ(ambiguous(), 0u);
  // The exit was applied at the interval's end: a later count of the pid finds nothing.
  count(30, 0x400010, 1);
  end();
  EXPECT_EQ(in("/bin/short"), 5u);
  EXPECT_EQ(pipeline_.counts().no_dso, 1u);
}

TEST_F(AttributionTest, AForkedChildThatExecsIsResolvedLikeItsOwnProcess) {
  apply(mmap(40, 0x400000, 0x1000, "/bin/sh"));
  end();
  apply(fork(41, 40));
  apply(exec(41));
  apply(mmap(41, 0x600000, 0x1000, "/usr/bin/child"));
  count(41, 0x600010, 8);
  count(40, 0x400010, 2);  // the parent did not change
  end();
  EXPECT_EQ(in("/usr/bin/child"), 8u);
  EXPECT_EQ(in("/bin/sh"), 2u);
  EXPECT_EQ(ambiguous(), 0u);
}

TEST_F(AttributionTest, APidReusedWithinTheIntervalMakesItsCountsAmbiguous) {
  apply(mmap(50, 0x400000, 0x1000, "/bin/first"));
  end();
  apply(exit(50));
  apply(fork(50, 1));
  apply(mmap(50, 0x400000, 0x1000, "/bin/second"));
  count(50, 0x400010, 6);
  end();
  EXPECT_EQ(in("/bin/first"), 0u);
  EXPECT_EQ(in("/bin/second"), 0u);
  EXPECT_EQ(ambiguous(), 6u);
}

TEST_F(AttributionTest, KernelAddressesAreTheKernelsWhateverTheProcessDid) {
  apply(mmap(60, 0x400000, 0x1000, "/bin/a"));
  end();
  apply(exec(60));
  count(60, 0xffffffff81000000, 9);
  end();
  EXPECT_EQ(ambiguous(), 0u);
  EXPECT_EQ(pipeline_.counts().samples, 9u);
}

}  // namespace
}  // namespace profcollect
