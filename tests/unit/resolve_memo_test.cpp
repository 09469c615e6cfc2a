// A branch stack's ends are resolved through a memo of runs (mapper/image_resolver.h,
// ImageTranslator::translate_run): every answer must be the one the resolver gives without it,
// whatever order the addresses come in, however many runs one sample touches, and a run must
// never be trusted past the sample it was found in (the process table changes between samples).
// The binary is the test program itself, mapped as the loader maps it (the file's PF_X segment
// and the pages around it), beside a library that is not selected and anonymous memory.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mapper/image_resolver.h"
#include "mapper/loaded_image.h"
#include "mapper/target_image_selector.h"
#include "tests/support/mmap_records.h"
#include "tests/unit/self_executable.h"

namespace profcollect {
namespace {

constexpr uint32_t kPid = 31, kOtherPid = 32;
constexpr uint64_t kBase = 0x555555000000, kLibBase = 0x7f0000000000, kAnon = 0x7f1000000000;

bool same(const ResolvedAddress& a, const ResolvedAddress& b) {
  return a.outcome == b.outcome && a.image == b.image && a.dso == b.dso &&
         (a.outcome != SampleOutcome::Mapped || (a.vaddr == b.vaddr && a.section == b.section));
}

class ResolveMemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    self_ = self_path();
    ASSERT_FALSE(self_.empty());
    size_ = std::filesystem::file_size(self_);
    image_ = LoadedImage::open_file(self_);
    for (const LoadSegment& seg : image_->elf()->load_segments()) {
      if (seg.executable()) {
        code_begin_ = seg.offset;
        code_end_ = seg.offset + seg.filesz;
      }
    }
    ASSERT_LT(code_begin_, code_end_);
    // The whole file in two mappings split inside the code, so that runs end at a mapping's end
    // as well as at the segment's (the second one page higher than the file's layout puts it); a library no one selects; anonymous memory.
    const uint64_t half = ((code_begin_ + code_end_) / 2) & ~uint64_t{0xfff};
    name_ = self_;
    for (uint32_t pid : {kPid, kOtherPid}) {
      const uint64_t base = pid == kPid ? kBase : kBase + 0x100000000;
      processes_.on_mmap(user_mmap(pid, base, half, 0, name_));
      // A page apart from the first: a run of the first that ran on would be shifted wrongly.
      processes_.on_mmap(user_mmap(pid, base + half + 0x1000, size_ - half, half, name_));
      processes_.on_mmap(user_mmap(pid, kLibBase, 0x200000, 0, lib_));
      processes_.on_mmap(user_mmap(pid, kAnon, 0x10000, 0, anon_));
    }
  }

  // Addresses all over the three mappings and around them, each process's.
  std::vector<std::pair<uint32_t, uint64_t>> addresses(size_t n, unsigned seed) const {
    std::mt19937_64 rng(seed);
    std::vector<std::pair<uint32_t, uint64_t>> out;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t pid = rng() % 4 == 0 ? kOtherPid : kPid;
      const uint64_t base = pid == kPid ? kBase : kBase + 0x100000000;
      switch (rng() % 5) {
        case 0:
        case 1:  // the code, and the pages around it
          out.emplace_back(
              pid, base + code_begin_ - 0x2000 + rng() % (code_end_ - code_begin_ + 0x4000));
          break;
        case 2:
          out.emplace_back(pid, base + rng() % (size_ + 0x2000));  // the file, past its end
          break;
        case 3:
          out.emplace_back(pid, kLibBase + rng() % 0x201000);
          break;
        default:
          out.emplace_back(pid, kAnon - 0x100 + rng() % 0x10200);
          break;
      }
    }
    return out;
  }

  std::string self_;
  uint64_t size_ = 0, code_begin_ = 0, code_end_ = 0;
  std::shared_ptr<LoadedImage> image_;
  ProcessTable processes_;
  std::string name_, lib_ = "/usr/lib/x86_64-linux-gnu/libnotselected.so.1", anon_ = "//anon";
};

TEST_F(ResolveMemoTest, EveryAnswerIsTheResolversWithoutTheMemo) {
  TargetImageSelector selector(image_, true, nullptr);
  ImageResolver resolver(selector);
  ResolveMemo memo;
  size_t mapped = 0;
  // Samples of 64 ends spread over many runs (more than the memo keeps): each answer checked.
  const auto ends = addresses(64 * 400, 1);
  for (size_t i = 0; i < ends.size(); ++i) {
    if (i % 64 == 0) memo.clear();
    const auto [pid, addr] = ends[i];
    const ResolvedAddress plain = resolver.resolve(processes_, pid, addr, CpuMode::User);
    const ResolvedAddress memoized = resolver.resolve(processes_, pid, addr, CpuMode::User, memo);
    ASSERT_TRUE(same(plain, memoized)) << std::hex << "pid " << pid << " address 0x" << addr;
    mapped += plain.outcome == SampleOutcome::Mapped;
  }
  EXPECT_GT(mapped, 1000u);  // the binary's code is among them, not only other outcomes
}

TEST_F(ResolveMemoTest, RunsTranslateEveryAddressInThemAsTheTranslatorDoes) {
  const ImageTranslator& translator = image_->translator();
  const Mapping* first = processes_.find(kPid, kBase, CpuMode::User);
  ASSERT_NE(first, nullptr);
  std::mt19937_64 rng(2);
  size_t runs = 0;
  for (const auto& [pid, addr] : addresses(2000, 3)) {
    const Mapping* m = processes_.find(pid, addr, CpuMode::User);
    if (m == nullptr || m->dso != first->dso) continue;
    const Dso& dso = processes_.dso(m->dso);
    const auto run = translator.translate_run(*m, dso, addr);
    ASSERT_EQ(run.has_value(), translator.translate(*m, dso, addr).has_value());
    if (!run) continue;
    ++runs;
    ASSERT_LE(run->begin, addr);
    ASSERT_LT(addr, run->end);
    ASSERT_GE(run->begin, m->start);
    ASSERT_LE(run->end, m->end);
    for (uint64_t a : {run->begin, run->end - 1, run->begin + rng() % (run->end - run->begin)}) {
      const auto in = translator.translate(*m, dso, a);
      ASSERT_TRUE(in.has_value()) << std::hex << a;
      EXPECT_EQ(in->vaddr, a + run->delta) << std::hex << a;
    }
  }
  EXPECT_GT(runs, 100u);
}

TEST_F(ResolveMemoTest, AClearedMemoForgetsAMappingThatChanged) {
  TargetImageSelector selector(image_, true, nullptr);
  ImageResolver resolver(selector);
  ResolveMemo memo;
  const uint64_t in_code = kBase + code_begin_ + 0x10;
  const ResolvedAddress before = resolver.resolve(processes_, kPid, in_code, CpuMode::User, memo);
  ASSERT_EQ(before.outcome, SampleOutcome::Mapped);
  // The process maps anonymous memory over its code (a JIT, a new exec): the next sample.
  processes_.on_mmap(user_mmap(kPid, kBase + code_begin_, 0x100000, 0, anon_));
  memo.clear();
  const ResolvedAddress after = resolver.resolve(processes_, kPid, in_code, CpuMode::User, memo);
  EXPECT_NE(after.outcome, SampleOutcome::Mapped);
  EXPECT_TRUE(same(after, resolver.resolve(processes_, kPid, in_code, CpuMode::User)));
}

}  // namespace
}  // namespace profcollect
