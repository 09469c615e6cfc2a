// ProfileStore with branch samples: a binary's directory switches to branch profiles when
// branch stacks arrive and stays so; IP samples of earlier runs move to bolt.nolbr.fdata instead
// of being lost; branch counts add up across runs through samples.branch; a damaged
// samples.branch is set aside, never added to.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "output/atomic_file.h"
#include "output/profile_store.h"

namespace profcollect {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/profcollect-store-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

BinaryIdentity identity() {
  BinaryIdentity id;
  id.path = "/opt/app/bin/server";
  id.build_id = *BuildId::from_hex("00112233445566778899aabbccddeeff00112233");
  return id;
}

BinaryProfileSnapshot ip_snapshot(uint64_t count) {
  BinaryProfileSnapshot s;
  s.identity = identity();
  s.counts.no_lbr.events = {"cycles:u"};
  s.counts.no_lbr.counts[{"main", 0x10}] = count;
  s.samples = count;
  s.event = "cycles:u";
  s.counts.ips.add(0x1010, count);
  return s;
}

// What the branch files would be made of: the cumulative counts, as a branch fdata line (one
// edge counted once a stack) a test can check.
RenderedProfiles render(const ImageCounts& c) {
  RenderedProfiles r;
  if (c.branches) {
    r.files.emplace_back("bolt.fdata",
                         "1 main 0 1 main 10 0 " + std::to_string(c.branches->stacks) + "\n");
    r.branch_fdata = true;
  }
  return r;
}

TEST(ProfileStoreBranches, EarlierIpSamplesAreKeptWhenBranchesArrive) {
  TempDir dir;
  const fs::path bdir = dir.path / identity().directory_name();
  {
    ProfileStore store(dir.path.string());
    store.write_binary(ip_snapshot(5));
  }
  EXPECT_NE(slurp(bdir / "bolt.fdata").find("main 10 5"), std::string::npos)
      << slurp(bdir / "bolt.fdata");
  {
    ProfileStore store(dir.path.string());
    BinaryProfileSnapshot s = ip_snapshot(3);
    BranchSamples b;
    b.stacks = 4;
    b.bolt.add_branch(TakenBranch{0x1010, 0x1020, false, false}, 4, 1);
    s.counts.branches = b;
    s.render = render;
    store.write_binary(s);
    EXPECT_TRUE(store.take_warnings().empty());
  }
  // The IP samples of both runs (5 + 3) are in bolt.nolbr.fdata; bolt.fdata is the branch one.
  EXPECT_NE(slurp(bdir / "bolt.nolbr.fdata").find("main 10 8"), std::string::npos)
      << slurp(bdir / "bolt.nolbr.fdata");
  EXPECT_EQ(slurp(bdir / "bolt.fdata"), "1 main 0 1 main 10 0 4\n");
  auto meta = nlohmann::json::parse(slurp(bdir / "meta.json"));
  EXPECT_EQ(meta["bolt_fdata"], "branch");
  EXPECT_EQ(meta["samples"], 8u);
  EXPECT_EQ(meta["branch_stacks"], 4u);

  // A later run without branch stacks (another event) keeps the branch profile and adds its IPs.
  {
    ProfileStore store(dir.path.string());
    BinaryProfileSnapshot s = ip_snapshot(2);
    s.render = render;
    store.write_binary(s);
  }
  EXPECT_EQ(slurp(bdir / "bolt.fdata"), "1 main 0 1 main 10 0 4\n");
  EXPECT_NE(slurp(bdir / "bolt.nolbr.fdata").find("main 10 10"), std::string::npos);
  auto back = parse_branch_samples(slurp(bdir / "samples.branch"), nullptr);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->bolt.branches().at(TakenBranch{0x1010, 0x1020, false, false}).count, 4u);

  // Branch counts add up across runs.
  {
    ProfileStore store(dir.path.string());
    BinaryProfileSnapshot s = ip_snapshot(1);
    BranchSamples b;
    b.stacks = 6;
    b.bolt.add_branch(TakenBranch{0x1010, 0x1020, false, false}, 6, 0);
    s.counts.branches = b;
    s.render = render;
    store.write_binary(s);
  }
  EXPECT_EQ(slurp(bdir / "bolt.fdata"), "1 main 0 1 main 10 0 10\n");
  back = parse_branch_samples(slurp(bdir / "samples.branch"), nullptr);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->bolt.branches().at(TakenBranch{0x1010, 0x1020, false, false}).count, 10u);
  EXPECT_EQ(back->bolt.branches().at(TakenBranch{0x1010, 0x1020, false, false}).mispredicts, 1u);
}

TEST(ProfileStoreBranches, DamagedBranchSamplesAreSetAside) {
  TempDir dir;
  const fs::path bdir = dir.path / identity().directory_name();
  fs::create_directories(bdir);
  { std::ofstream(bdir / "samples.branch") << "# profcollect branch samples 1\nB 10 zz - 1 0\n"; }
  ProfileStore store(dir.path.string());
  BinaryProfileSnapshot s = ip_snapshot(1);
  BranchSamples b;
  b.stacks = 2;
  s.counts.branches = b;
  s.render = render;
  store.write_binary(s);
  auto warnings = store.take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("samples.branch: line 2"), std::string::npos) << warnings[0];
  bool aside = false;
  for (const auto& e : fs::directory_iterator(bdir)) {
    aside |= e.path().filename().string().starts_with("samples.branch.unreadable-");
  }
  EXPECT_TRUE(aside);
  EXPECT_EQ(slurp(bdir / "bolt.fdata"), "1 main 0 1 main 10 0 2\n");
}

TEST(ProfileStoreBranches, BranchSamplesWithoutWriterAreRefused) {
  TempDir dir;
  ProfileStore store(dir.path.string());
  BinaryProfileSnapshot s = ip_snapshot(1);
  BranchSamples b;
  s.counts.branches = b;
  EXPECT_THROW(store.write_binary(s), OutputError);
}

}  // namespace
}  // namespace profcollect
