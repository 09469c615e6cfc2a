// ProfileStore reading back a directory an earlier run left damaged: a meta.json whose fields
// have other types, a samples.ip with lines that are not "<hex> <decimal>", and paths that are
// not UTF-8 cost at most the earlier counts, never the flush. A directory with a file that
// cannot be read is set aside whole, so its files keep agreeing with each other.
#include <gtest/gtest.h>

#include <algorithm>
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
  s.counts.no_lbr.events = {"cpu-clock:"};
  s.counts.no_lbr.counts[{"main", 0x10}] = 2;
  s.samples = 2;
  s.event = "cpu-clock";
  s.counts.ips.add(0x1010, 2);
  return s;
}

TEST(ProfileStoreDamagedFiles, MetaFieldsOfOtherTypesSetTheDirectoryAside) {
  TempDir dir;
  const BinaryProfileSnapshot s = snapshot("/bin/app");
  const fs::path sub = dir.path / s.identity.directory_name();
  put(sub / "meta.json", R"({"samples": "many", "first_sample_ns": -1, "bolt_fdata": 7})");
  put(sub / "bolt.fdata", "no_lbr cpu-clock:\n1 main 10 3\n");
  ProfileStore store(dir.path.string());
  ASSERT_NO_THROW(store.write_binary(s));
  const auto warnings = store.take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find((sub / "meta.json").string() + ": 'samples' is not a whole number"),
            std::string::npos)
      << warnings[0];
  const auto meta = nlohmann::json::parse(slurp(sub / "meta.json"));
  EXPECT_EQ(meta["samples"], 2u)
      << "the samples of a meta.json that cannot say how many were added";
  EXPECT_EQ(meta["bolt_fdata"], "no_lbr");
}

TEST(ProfileStoreDamagedFiles, SamplesIpWithASignedOrSpacedLineRestarts) {
  for (const char* text : {"1010 -5\n", "1010 +5\n", "-1010 5\n", "1010  5\n", "1010\n",
                           "1010 5 6\n", "1010 99999999999999999999\n"}) {
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
  put(sub / "meta.json",
      R"({"path": "/bin/app", "build_id": "00112233445566778899aabbccddeeff00112233", "samples": 4})");
  ProfileStore store(dir.path.string());
  store.write_binary(s);
  EXPECT_EQ(slurp(sub / "samples.ip"), "1000 1\n1010 5\n");
  EXPECT_TRUE(store.take_warnings().empty());
}

// The counts a directory's files hold: meta.json's samples, the bolt.fdata total and the
// samples.ip total, read without profcollect's readers.
struct DirectoryTotals {
  uint64_t meta = 0, fdata = 0, ips = 0;
};
DirectoryTotals totals(const fs::path& sub) {
  DirectoryTotals t;
  t.meta = nlohmann::json::parse(slurp(sub / "meta.json")).at("samples").get<uint64_t>();
  std::istringstream fdata(slurp(sub / "bolt.fdata"));
  std::string line;
  std::getline(fdata, line);  // the no_lbr header
  while (std::getline(fdata, line)) t.fdata += std::stoull(line.substr(line.rfind(' ') + 1));
  std::istringstream ips(slurp(sub / "samples.ip"));
  std::string address;
  uint64_t count = 0;
  while (ips >> address >> count) t.ips += count;
  return t;
}

std::vector<std::string> set_aside_files(const fs::path& sub) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(sub)) {
    const std::string name = e.path().filename().string();
    if (name.find(".unreadable-") != std::string::npos)
      names.push_back(name.substr(0, name.find(".unreadable-")));
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ProfileStoreDamagedFiles, AGarbageLineInBoltFdataSetsTheWholeDirectoryAside) {
  TempDir dir;
  const BinaryProfileSnapshot s = snapshot("/bin/app");
  const fs::path sub = dir.path / s.identity.directory_name();
  {
    ProfileStore first(dir.path.string());
    first.write_binary(s);
  }
  ASSERT_EQ(totals(sub).fdata, 2u);
  std::ofstream(sub / "bolt.fdata", std::ios::app) << "garbage\n";
  ProfileStore second(dir.path.string());
  second.write_binary(s);
  const auto warnings = second.take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find((sub / "bolt.fdata").string()), std::string::npos) << warnings[0];
  // The earlier files are kept aside, every one of them; the new generation counts this run.
  EXPECT_EQ(set_aside_files(sub),
            (std::vector<std::string>{"bolt.fdata", "meta.json", "samples.ip"}));
  const DirectoryTotals t = totals(sub);
  EXPECT_EQ(t.meta, 2u);
  EXPECT_EQ(t.fdata, 2u);
  EXPECT_EQ(t.ips, 2u);
  // A later flush adds to the new generation and keeps the set-aside files.
  ProfileStore third(dir.path.string());
  third.write_binary(s);
  EXPECT_TRUE(third.take_warnings().empty());
  EXPECT_EQ(set_aside_files(sub).size(), 3u);
  const DirectoryTotals later = totals(sub);
  EXPECT_EQ(later.meta, 4u);
  EXPECT_EQ(later.fdata, 4u);
  EXPECT_EQ(later.ips, 4u);
}

TEST(ProfileStoreDamagedFiles, ACorruptMetaJsonIsSetAsideNotRewritten) {
  TempDir dir;
  const BinaryProfileSnapshot s = snapshot("/bin/app");
  const fs::path sub = dir.path / s.identity.directory_name();
  {
    ProfileStore first(dir.path.string());
    first.write_binary(s);
  }
  put(sub / "meta.json", "{\"samples\": 2, \"path\": ");
  ProfileStore second(dir.path.string());
  second.write_binary(s);
  const auto warnings = second.take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find((sub / "meta.json").string() + ": not a JSON object"),
            std::string::npos)
      << warnings[0];
  EXPECT_EQ(set_aside_files(sub),
            (std::vector<std::string>{"bolt.fdata", "meta.json", "samples.ip"}));
  const DirectoryTotals t = totals(sub);
  EXPECT_EQ(t.meta, t.fdata);
  EXPECT_EQ(t.meta, t.ips);
}

TEST(ProfileStoreDamagedFiles, LeftoversOfAKilledRunAreRemovedAtTheNextStart) {
  TempDir dir;
  const BinaryProfileSnapshot s = snapshot("/bin/app");
  const std::string name = s.identity.directory_name();
  {
    ProfileStore first(dir.path.string());
    first.write_binary(s);
  }
  // What a run killed in the middle of a flush leaves: a half-written generation, an old
  // generation not yet removed, a temporary collection.json.
  put(dir.path / ("." + name + ".gen-0123456789ab") / "bolt.fdata", "half");
  put(dir.path / ("." + name + ".old-0123456789ab") / "meta.json", "{}");
  put(dir.path / ".collection.json.tmp-0123456789ab", "{");
  // A replacement cut short between its two renames: only the old generation is there.
  const std::string other = "other-00112233445566778899aabbccddeeff00112233";
  put(dir.path / ("." + other + ".old-ba9876543210") / "meta.json", "{\"samples\": 1}");
  ProfileStore store(dir.path.string());
  std::vector<std::string> hidden;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    if (e.path().filename().string().starts_with("."))
      hidden.push_back(e.path().filename().string());
  }
  EXPECT_EQ(hidden, std::vector<std::string>{});
  EXPECT_EQ(slurp(dir.path / other / "meta.json"), "{\"samples\": 1}")
      << "the interrupted replacement was not undone";
  EXPECT_EQ(store.take_warnings().size(), 4u);
}

TEST(ProfileStoreDamagedFiles, APathThatIsNotUtf8IsWrittenWithReplacements) {
  TempDir dir;
  const BinaryProfileSnapshot s = snapshot("/opt/caf\xe9/app");  // Latin-1, as a file name may be
  ProfileStore store(dir.path.string());
  ASSERT_NO_THROW(store.write_binary(s));
  const auto meta =
      nlohmann::json::parse(slurp(dir.path / s.identity.directory_name() / "meta.json"));
  EXPECT_EQ(meta["path"], "/opt/caf\xef\xbf\xbd/app");
  EXPECT_EQ(json_text(nlohmann::ordered_json("a\xff")), "\"a\xef\xbf\xbd\"");
}

}  // namespace
}  // namespace profcollect
