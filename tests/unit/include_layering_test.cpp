// The layers of the source tree, read from the #include lines themselves: record (the record
// vocabulary) < mapper < output < collector < collector/cli, and bpf (the BPF programs' loaders)
// beside mapper: it includes nothing of ours but record, and collector includes it. A header or
// source may include its own folder and the folders below it, never one above, and the folders
// form no cycle. mapper knows no perf_event ABI, ring buffer or event loop; output knows no
// process table and no ring buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = PROFCOLLECT_SOURCE_DIR;

// Lower rank lies below; a folder may include only folders of its rank or lower.
const std::map<std::string, int> kRanks = {
    {"record", 0}, {"bpf", 1}, {"mapper", 1}, {"output", 2}, {"collector", 3}, {"collector/cli", 4}};

// A BPF skeleton ("bpf/NAME.skel.h") is generated into the build tree from bpf/NAME.bpf.c.
std::string source_of(const std::string& target) {
  static const std::string kSkeleton = ".skel.h";
  if (target.size() > kSkeleton.size() &&
      target.compare(target.size() - kSkeleton.size(), kSkeleton.size(), kSkeleton) == 0) {
    return target.substr(0, target.size() - kSkeleton.size()) + ".bpf.c";
  }
  return target;
}

struct Include {
  std::string file;    // relative to the root, e.g. "mapper/process_table.h"
  int line = 0;
  std::string target;  // as written between the quotes or brackets
  bool quoted = false;
};

std::string folder_of(const std::string& relative) {
  return fs::path(relative).parent_path().generic_string();
}

std::vector<Include> includes_of_tree() {
  static const std::regex kInclude(R"(^\s*#\s*include\s*([<"])([^">]+)[">])");
  std::vector<Include> out;
  for (const auto& [folder, rank] : kRanks) {
    for (const auto& entry : fs::directory_iterator(kRoot / folder)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      std::ifstream in(entry.path());
      std::string text;
      int number = 0;
      while (std::getline(in, text)) {
        ++number;
        std::smatch m;
        if (std::regex_search(text, m, kInclude)) {
          out.push_back({fs::relative(entry.path(), kRoot).generic_string(), number, m[2].str(),
                         m[1].str() == "\""});
        }
      }
    }
  }
  return out;
}

std::string where(const Include& inc) {
  return inc.file + ":" + std::to_string(inc.line) + ": #include " + inc.target;
}

TEST(IncludeLayering, TheTreeIsReadAndHasIncludesInEveryLayer) {
  std::set<std::string> folders;
  for (const Include& inc : includes_of_tree()) folders.insert(folder_of(inc.file));
  for (const auto& [folder, rank] : kRanks) EXPECT_TRUE(folders.count(folder)) << folder;
}

TEST(IncludeLayering, NoHeaderIsIncludedFromAFolderAbove) {
  for (const Include& inc : includes_of_tree()) {
    if (!inc.quoted) continue;
    const std::string from = folder_of(inc.file);
    const std::string to = folder_of(inc.target);
    ASSERT_TRUE(fs::exists(kRoot / source_of(inc.target))) << where(inc) << ": no such file in the tree";
    auto to_rank = kRanks.find(to);
    ASSERT_NE(to_rank, kRanks.end()) << where(inc) << ": includes a folder outside the layers";
    EXPECT_LE(to_rank->second, kRanks.at(from)) << where(inc) << ": includes upwards";
  }
}

TEST(IncludeLayering, FoldersFormNoCycle) {
  std::map<std::string, std::set<std::string>> edges;
  for (const Include& inc : includes_of_tree()) {
    if (!inc.quoted) continue;
    const std::string from = folder_of(inc.file), to = folder_of(inc.target);
    if (from != to) edges[from].insert(to);
  }
  // Depth-first search; a folder met again while still on the path closes a cycle.
  std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& f) {
    state[f] = 1;
    path.push_back(f);
    for (const std::string& next : edges[f]) {
      if (state[next] == 1) {
        std::string cycle;
        for (auto it = std::find(path.begin(), path.end(), next); it != path.end(); ++it) cycle += *it + " -> ";
        ADD_FAILURE() << "cycle between folders: " << cycle << next;
      } else if (state[next] == 0) {
        visit(next);
      }
    }
    path.pop_back();
    state[f] = 2;
  };
  for (const auto& [folder, rank] : kRanks) {
    if (state[folder] == 0) visit(folder);
  }
}

TEST(IncludeLayering, MapperKnowsNoPerfEventRingBufferOrEventLoop) {
  for (const Include& inc : includes_of_tree()) {
    const std::string from = folder_of(inc.file);
    if (from != "mapper" && from != "record") continue;
    EXPECT_NE(inc.target, "linux/perf_event.h") << where(inc);
    EXPECT_EQ(inc.target.find("boost/"), std::string::npos) << where(inc);
    EXPECT_EQ(inc.target.find("poll"), std::string::npos) << where(inc);
    EXPECT_EQ(inc.target.find("epoll"), std::string::npos) << where(inc);
  }
}

TEST(IncludeLayering, BpfIncludesNothingOfOursButRecord) {
  for (const Include& inc : includes_of_tree()) {
    if (!inc.quoted || folder_of(inc.file) != "bpf") continue;
    const std::string to = folder_of(inc.target);
    EXPECT_TRUE(to == "bpf" || to == "record") << where(inc);
  }
}

TEST(IncludeLayering, OutputKnowsNoProcessTableAndNoRingBuffer) {
  for (const Include& inc : includes_of_tree()) {
    if (folder_of(inc.file) != "output") continue;
    EXPECT_NE(inc.target, "mapper/process_table.h") << where(inc);
    EXPECT_NE(inc.target, "linux/perf_event.h") << where(inc);
    EXPECT_EQ(inc.target.find("ring_buffer"), std::string::npos) << where(inc);
    EXPECT_EQ(inc.target.find("boost/"), std::string::npos) << where(inc);
  }
}

}  // namespace
