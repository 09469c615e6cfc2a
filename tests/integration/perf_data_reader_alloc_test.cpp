// Once warm, reading a perf.data allocates nothing per record: the input buffer, the ordering
// arena and the decoder's scratch are reused. Counted by tests/support/allocation_counter.h.
#include <gtest/gtest.h>

#include <filesystem>

#include <sys/stat.h>

#include "collector/input/perf_data_reader.h"
#include "mapper/process_table.h"
#include "collector/pipeline/mapped_image_selector.h"
#include "collector/pipeline/sample_pipeline.h"
#include "tests/integration/branch_fixtures.h"
#include "tests/support/allocation_counter.h"
#include "tests/unit/perf_record_builder.h"

namespace profcollect {
namespace {

using namespace perfbuild;

TEST(PerfDataReaderAllocationTest, NoAllocationPerRecordOnceWarm) {
  Attr a;
  a.type = 0;
  a.sample_type = IDENTIFIER | IP | TID | TIME | CPU | PERIOD | BRANCH_STACK;
  a.branch_sample_type = kBranchHwIndex;
  std::vector<uint8_t> records = header_attr(a, {1});
  const int rounds = 60, per_round = 300;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < per_round; ++i) {
      // Two CPUs interleaved, a bit out of order, as ring buffers are written.
      const uint64_t t = 1000 + uint64_t(r) * per_round * 10 + uint64_t(i) * 10 - (i % 2 ? 15 : 0);
      Sample s;
      s.identifier = 1;
      s.ip = 0x400000 + i;
      s.pid = s.tid = 7;
      s.time = t;
      s.cpu = i % 2;
      s.period = 1;
      s.hw_idx = 3;
      s.branches.assign(16, Branch{0x400100, 0x400200, 2});
      auto rec = sample(s, a);
      records.insert(records.end(), rec.begin(), rec.end());
      if (i % 50 == 0) {
        auto m = mmap2(Mmap2{.pid = 7,
                             .tid = 7,
                             .start = 0x400000,
                             .len = 0x1000,
                             .build_id = {},
                             .file = "/bin/x"},
                       SampleId{.pid = 7, .tid = 7, .time = t, .id = 1}, a);
        records.insert(records.end(), m.begin(), m.end());
      }
    }
    auto fr = finished_round();
    records.insert(records.end(), fr.begin(), fr.end());
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("alloc_test_" + std::to_string(::getpid()) + ".data");
  write_file(path, pipe_file(records));

  auto source = open_perf_data(path.string());
  Record r;
  size_t read = 0;
  const size_t total = size_t(rounds) * (per_round + per_round / 50);
  while (read < total / 3 && source->next(r)) ++read;  // warm up
  test::AllocationCounter allocations;
  size_t branches = 0;
  while (source->next(r)) {
    ++read;
    if (auto* s = std::get_if<SampleRecord>(&r)) branches += s->branches.size();
  }
  allocations.stop();
  std::filesystem::remove(path);
  EXPECT_EQ(read, total);
  EXPECT_GT(branches, 0u);
  EXPECT_EQ(allocations.count(), 0u);
}

// Live aggregation of branch stacks (what `profcollect` runs on every LBR/BRS sample): once a
// binary's symbols and code are loaded and its branches and ranges have been seen, counting a
// sample's IP and branch stack allocates nothing. The second pass over a real recording sees
// only keys the first pass made, so any allocation there is one per sample.
class LiveBranchAllocationTest : public test::BranchFixtureTest {};

TEST_F(LiveBranchAllocationTest, NoAllocationPerBranchStackOnceWarm) {
  const auto data = fixture("branch_virtual.data"), bin = fixture("branch_virtual");
  BinarySelection selection;
  selection.paths.push_back(bin.string());
  MappedImageSelector selector(selection);
  PipelineOptions options;
  SamplePipeline pipeline(selector, options);
  size_t stacks_counted = 0;
  size_t warm_allocations = 0;
  for (int pass = 0; pass < 2; ++pass) {
    auto source = open_perf_data(data.string());
    Record r;
    while (source->next(r)) {
      if (auto* s = std::get_if<SampleRecord>(&r)) {
        if (pass == 1) {
          test::AllocationCounter allocations;
          pipeline.add_sample(*s);
          warm_allocations += allocations.count();
          if (!s->branches.empty()) ++stacks_counted;
        } else {
          pipeline.add_sample(*s);
        }
      } else {
        pipeline.consume(r);
      }
    }
  }
  EXPECT_GT(stacks_counted, 100u);
  EXPECT_EQ(pipeline.profiled_slots().size(), 1u);
  EXPECT_EQ(warm_allocations, 0u) << "allocations while counting " << stacks_counted
                                  << " warm stacks";
}

}  // namespace
}  // namespace profcollect
