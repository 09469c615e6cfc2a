// Weights: the pipeline takes a count with every sample, since a BPF engine delivers counts,
// not records. The samples of a real recording given one by one -- each twice -- or once with
// a count of two give identical profiles in every format, and identical counts.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "collector/input/perf_data_reader.h"
#include "collector/pipeline/sample_pipeline.h"
#include "mapper/target_image_selector.h"
#include "output/profile_renderer.h"
#include "tests/integration/branch_fixtures.h"
#include "tests/integration/convert_fixtures.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

struct Fed {
  std::vector<std::pair<std::string, std::string>> files;
  PipelineCounts counts;
};

// weight 1: every sample is given twice, one by one; weight 2: once, counted twice.
Fed feed(const fs::path& data, const fs::path& binary, uint64_t weight) {
  auto target = LoadedImage::open_file(binary.string());
  auto source = open_perf_data(data.string());
  TargetImageSelector selector(target, false, recorded_build_ids(*source));
  SamplePipeline pipeline(selector, PipelineOptions{});
  Record r;
  while (source->next(r)) {
    if (const auto* s = std::get_if<SampleRecord>(&r)) {
      if (weight == 1) {
        pipeline.add_sample(*s);
        pipeline.add_sample(*s);
      } else {
        pipeline.add_sample(*s, weight);
      }
    } else {
      pipeline.consume(r);
    }
  }
  pipeline.settle();
  Fed out;
  out.counts = pipeline.counts();
  const auto slots = pipeline.profiled_slots();
  EXPECT_EQ(slots.size(), 1u);
  if (slots.empty()) return out;
  const ImageProfile& profile = *pipeline.profile(slots.front());
  RenderRequest request;
  request.formats = profile_formats();
  out.files = render_profiles(*target, profile.counts({"e"}), request).files;
  return out;
}

void expect_same(const Fed& once, const Fed& merged, size_t expected_files) {
  EXPECT_EQ(once.counts.samples, merged.counts.samples);
  EXPECT_EQ(once.counts.branch_stacks, merged.counts.branch_stacks);
  EXPECT_EQ(once.counts.outcomes.counts, merged.counts.outcomes.counts);
  EXPECT_GT(once.counts.outcomes[SampleOutcome::Mapped], 0u);
  ASSERT_EQ(once.files.size(), expected_files);
  ASSERT_EQ(once.files.size(), merged.files.size());
  for (size_t i = 0; i < once.files.size(); ++i) {
    SCOPED_TRACE(once.files[i].first);
    EXPECT_EQ(once.files[i].first, merged.files[i].first);
    EXPECT_GT(once.files[i].second.size(), 20u);
    EXPECT_EQ(once.files[i].second, merged.files[i].second);
  }
}

class PipelineWeightsIp : public ConvertFixtureTest {};

TEST_F(PipelineWeightsIp, SamplesOneByOneOrWithCountsGiveIdenticalProfiles) {
  const Fed once = feed(fixture("hot_gcc.data"), fixture("hot_gcc"), 1);
  const Fed merged = feed(fixture("hot_gcc.data"), fixture("hot_gcc"), 2);
  // No branch stacks: no pre-aggregated profile (bolt-inferred's edges are inferred).
  expect_same(once, merged, 4);
}

class PipelineWeightsBranch : public BranchFixtureTest {};

TEST_F(PipelineWeightsBranch, BranchStacksOneByOneOrWithCountsGiveIdenticalProfiles) {
  const Fed once = feed(fixture("branch_virtual.data"), fixture("branch_virtual"), 1);
  const Fed merged = feed(fixture("branch_virtual.data"), fixture("branch_virtual"), 2);
  EXPECT_GT(once.counts.branch_stacks, 100u);
  expect_same(once, merged, 5);
}

}  // namespace
}  // namespace profcollect::test
