// `profcollect merge` of hosts that saw one binary differently: one without branch stacks (its
// bolt.fdata no_lbr), one with them (bolt.fdata branch fdata, its IP samples in
// bolt.nolbr.fdata), as when a fleet mixes machines with and without LBR. The merged directory
// must be a branch profile (as one directory that branch stacks reached, docs/usage.md, "Output"):
// bolt.fdata the branch host's edges, bolt.nolbr.fdata the per-line sum of both hosts' no_lbr
// counts, meta.json samples summed, time range widened with 0 (unknown) ignored, events the
// union. The inputs are written by the test in the output layout, so every expected count is
// the test's own arithmetic.
#include <gtest/gtest.h>

#include "tests/integration/live_support.h"
#include "tests/integration/merge_judges.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kName = "prog-0123456789abcdef0123456789abcdef01234567";

void write_binary(const fs::path& host, const json& meta,
                  const std::map<std::string, std::string>& files) {
  fs::create_directories(host / kName);
  write_file(host / kName / "meta.json", meta.dump(2) + "\n");
  for (const auto& [name, text] : files) write_file(host / kName / name, text);
}

json meta_of(uint64_t samples, uint64_t first, uint64_t last, const std::string& event,
             bool branch) {
  json meta = {{"path", "/usr/bin/prog"},  {"build_id", "0123456789abcdef0123456789abcdef01234567"},
               {"samples", samples},       {"first_sample_ns", first},
               {"last_sample_ns", last},   {"event", event},
               {"events", {event}},        {"bolt_fdata", branch ? "branch" : "no_lbr"},
               {"formats", {"bolt.fdata"}}};
  if (branch) meta["branch_stacks"] = 4;
  return meta;
}

TEST(MergeMixedTest, NoLbrAndBranchHostsMakeABranchProfile) {
  TempDir tmp;
  write_binary(tmp / "plain", meta_of(9, 0, 5000, "cpu-clock", false),
               {{"bolt.fdata", "no_lbr cpu-clock:\n1 main 10 4\n1 work 0 5\n"}});
  write_binary(tmp / "lbr", meta_of(6, 2000, 3000, "cycles:u", true),
               {{"bolt.fdata", "1 main 1a 1 work 0 1 4\n"},
                {"bolt.nolbr.fdata", "no_lbr cycles:u:\n1 main 10 2\n1 main 14 4\n"}});
  const ProfcollectRun run = run_merge(tmp / "out", {tmp / "plain", tmp / "lbr"});
  ASSERT_EQ(run.run.exit_code, 0) << run.describe();
  const fs::path merged = tmp / "out" / kName;
  EXPECT_EQ(sorted_lines(read_file(merged / "bolt.fdata")),
            std::vector<std::string>{"1 main 1a 1 work 0 1 4"});
  const NoLbrFdata nolbr = parse_no_lbr_fdata(read_file(merged / "bolt.nolbr.fdata"));
  EXPECT_EQ(nolbr.header, "no_lbr cpu-clock: cycles:u:");
  const NamedSiteCounts want = {{{"main", 0x10}, 6}, {{"main", 0x14}, 4}, {{"work", 0}, 5}};
  EXPECT_EQ(nolbr.counts, want);
  const json meta = read_json_file(merged / "meta.json");
  EXPECT_EQ(meta.at("bolt_fdata"), "branch");
  EXPECT_EQ(meta.at("samples"), 15);
  EXPECT_EQ(meta.at("branch_stacks"), 4);
  EXPECT_EQ(meta.at("first_sample_ns"), 2000);
  EXPECT_EQ(meta.at("last_sample_ns"), 5000);
  EXPECT_EQ(meta.at("events"), json({"cpu-clock", "cycles:u"}));
  EXPECT_EQ(meta.at("formats"), json({"bolt.fdata"}));
}

}  // namespace
}  // namespace profcollect::test
