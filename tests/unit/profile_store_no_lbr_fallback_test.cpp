// ProfileStore's meta.json says what the files hold as rendered: a run with branch stacks whose
// renderer fell back to BOLT's no_lbr profile (no BOLT block map, an i386 process) writes
// bolt_fdata "no_lbr", so that merge (output/profile_merge.h) and the next run read bolt.fdata
// as what it is.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "output/profile_merge.h"
#include "tests/unit/profile_directory_fixtures.h"

namespace profcollect {
namespace {

using namespace profcollect::test;

// A run with one branch stack, rendered as the renderer does without a block map.
BinaryProfileSnapshot run_with_branches(BranchSamples& branches) {
  BinaryProfileSnapshot s = app_run();
  branches.stacks = 1;
  branches.bolt.add_branch({0x1010, 0x1020, false, false}, 1, 0);
  s.counts.branches = branches;
  s.render = [](const ImageCounts& counts) {
    RenderedProfiles r;
    r.files.emplace_back("bolt.fdata", format_no_lbr_fdata(counts.no_lbr));
    return r;  // branch_fdata stays false: what was made is no_lbr
  };
  return s;
}

TEST(ProfileStoreNoLbrFallback, MetaJsonSaysNoLbrAndMergeTakesTheDirectory) {
  ScratchDirectory dir;
  BranchSamples branches;
  const BinaryProfileSnapshot run = run_with_branches(branches);
  const fs::path sub = write_app(dir.path / "in", run);
  const auto meta = nlohmann::json::parse(slurp(sub / "meta.json"));
  EXPECT_EQ(meta.at("bolt_fdata"), "no_lbr");
  EXPECT_EQ(meta.at("branch_stacks"), 1u);
  EXPECT_FALSE(fs::exists(sub / "bolt.nolbr.fdata")) << "a second no_lbr profile beside bolt.fdata";
  const MergeSummary merged =
      merge_profile_directories({(dir.path / "in").string()}, (dir.path / "out").string());
  EXPECT_EQ(merged.binaries, std::vector<std::string>{sub.filename().string()});
  EXPECT_EQ(slurp(dir.path / "out" / sub.filename() / "bolt.fdata"), slurp(sub / "bolt.fdata"));
}

TEST(ProfileStoreNoLbrFallback, TheNextRunAddsToIt) {
  ScratchDirectory dir;
  BranchSamples branches;
  const BinaryProfileSnapshot run = run_with_branches(branches);
  write_app(dir.path, run);
  ProfileStore store(dir.path.string());
  store.write_binary(run);
  EXPECT_TRUE(store.take_warnings().empty());
  const auto meta =
      nlohmann::json::parse(slurp(dir.path / run.identity.directory_name() / "meta.json"));
  EXPECT_EQ(meta.at("samples"), 14u);
  EXPECT_EQ(meta.at("file_totals").at("bolt.fdata"), 14u);
  EXPECT_EQ(meta.at("branch_stacks"), 2u);
}

}  // namespace
}  // namespace profcollect
