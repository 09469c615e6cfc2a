// ProfileStore reading back a directory an earlier run left damaged: a meta.json whose fields
// have other types, a samples.ip with lines that are not "<hex> <decimal>", and paths that are
// not UTF-8 cost at most the earlier counts, never the flush.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "output/atomic_file.h"
#include "output/json_text.h"
#include "output/profile_store.h"

namespace profcollect {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/profcollect-damaged-XXXXXX";
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

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

BinaryProfileSnapshot snapshot(const std::string& path) {
  BinaryProfileSnapshot s;
  s.identity.path = path;
  s.identity.build_id = *BuildId::from_hex("00112233445566778899aabbccddeeff00112233");
  s.fdata.events = {"cpu-clock:"};
  s.fdata.counts[{"main", 0x10}] = 2;
  s.samples = 2;
  s.event = "cpu-clock";
  s.ips.add(0x1010, 2);
  return s;
}

TEST(ProfileStoreDamagedFiles, MetaFieldsOfOtherTypesAreIgnored) {
  TempDir dir;
  const BinaryProfileSnapshot s = snapshot("/bin/app");
  const fs::path sub = dir.path / s.identity.directory_name();
  put(sub / "meta.json", R"({"samples": "many", "first_sample_ns": -1, "bolt_fdata": 7})");
  put(sub / "bolt.fdata", "no_lbr cpu-clock:\n1 main 10 3\n");
  ProfileStore store(dir.path.string());
  ASSERT_NO_THROW(store.write_binary(s));
  const auto meta = nlohmann::json::parse(slurp(sub / "meta.json"));
  EXPECT_EQ(meta["samples"], 5u) << "the earlier fdata's 3 samples, and this run's 2";
  EXPECT_EQ(meta["bolt_fdata"], "no_lbr");
}

TEST(ProfileStoreDamagedFiles, SamplesIpWithASignedOrSpacedLineRestarts) {
  for (const char* text : {"1010 -5\n", "1010 +5\n", "-1010 5\n", "1010  5\n", "1010\n", "1010 5 6\n",
                           "1010 99999999999999999999\n"}) {
    TempDir dir;
    const BinaryProfileSnapshot s = snapshot("/bin/app");
    const fs::path sub = dir.path / s.identity.directory_name();
    put(sub / "samples.ip", std::string("1000 1\n") + text);
    ProfileStore store(dir.path.string());
    store.write_binary(s);
    EXPECT_EQ(slurp(sub / "samples.ip"), "1010 2\n") << text;
    EXPECT_EQ(store.take_warnings().size(), 1u) << text;
  }
  TempDir dir;
  const BinaryProfileSnapshot s = snapshot("/bin/app");
  const fs::path sub = dir.path / s.identity.directory_name();
  put(sub / "samples.ip", "1000 1\n\n1010 3\n");
  ProfileStore store(dir.path.string());
  store.write_binary(s);
  EXPECT_EQ(slurp(sub / "samples.ip"), "1000 1\n1010 5\n");
  EXPECT_TRUE(store.take_warnings().empty());
}

TEST(ProfileStoreDamagedFiles, APathThatIsNotUtf8IsWrittenWithReplacements) {
  TempDir dir;
  const BinaryProfileSnapshot s = snapshot("/opt/caf\xe9/app");  // Latin-1, as a file name may be
  ProfileStore store(dir.path.string());
  ASSERT_NO_THROW(store.write_binary(s));
  const auto meta = nlohmann::json::parse(slurp(dir.path / s.identity.directory_name() / "meta.json"));
  EXPECT_EQ(meta["path"], "/opt/caf\xef\xbf\xbd/app");
  EXPECT_EQ(json_text(nlohmann::ordered_json("a\xff")), "\"a\xef\xbf\xbd\"");
}

}  // namespace
}  // namespace profcollect
