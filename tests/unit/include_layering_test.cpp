// The layers of the source tree, read from the #include lines themselves and held against the
// build's own links: record (the record vocabulary) < mapper < output < collector's rooms
// (collector/CMakeLists.txt), and bpf (the BPF programs' loaders) beside mapper. A folder may
// include its own headers and those of the libraries its library links (directly or through
// them), never others, and the folders form no cycle. A library's outside headers (Boost,
// toml++, libsystemd, libbpf, zstd...) come only with the package it links, so the rooms that do
// not link them (convert's input, for one) build without them. mapper knows no perf_event ABI,
// ring buffer or event loop; output knows no process table and no ring buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = PROFCOLLECT_SOURCE_DIR;

// The libraries of the build and what each links, read from the CMake files: add_library(NAME ...)
// with target_link_libraries(NAME PUBLIC ...) at the top, profcollect_room(ROOM LINKS ...) in
// collector/ (library profcollect_ROOM, folder collector/ROOM).
struct Library {
  std::string folder;           // "" for an outside package
  std::set<std::string> links;  // library or package names, as CMake writes them
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::map<std::string, Library> libraries_of_build() {
  std::map<std::string, Library> libraries;
  const std::string top = read_text(kRoot / "CMakeLists.txt");
  static const std::regex kTopLink(
      R"(target_link_libraries\((profcollect_(\w+))\s+PUBLIC([^)]*)\))");
  for (std::sregex_iterator it(top.begin(), top.end(), kTopLink), end; it != end; ++it) {
    Library& lib = libraries[(*it)[1].str()];
    lib.folder = (*it)[2].str();
    for (const std::string& w : words_of((*it)[3].str())) lib.links.insert(w);
  }
  libraries["profcollect_record"].folder = "record";
  const std::string rooms = read_text(kRoot / "collector/CMakeLists.txt");
  static const std::regex kRoom(R"(profcollect_room\((\w+)\s+LINKS([^)]*)\))");
  for (std::sregex_iterator it(rooms.begin(), rooms.end(), kRoom), end; it != end; ++it) {
    Library& lib = libraries["profcollect_" + (*it)[1].str()];
    lib.folder = "collector/" + (*it)[1].str();
    for (const std::string& w : words_of((*it)[2].str())) {
      if (w == "EXCLUDE") break;
      lib.links.insert(w);
    }
  }
  return libraries;
}

// Everything a library reaches through its links, itself included.
std::set<std::string> closure_of(const std::map<std::string, Library>& libraries,
                                 const std::string& name) {
  std::set<std::string> seen;
  std::vector<std::string> todo = {name};
  while (!todo.empty()) {
    const std::string next = todo.back();
    todo.pop_back();
    if (!seen.insert(next).second) continue;
    if (auto it = libraries.find(next); it != libraries.end()) {
      for (const std::string& l : it->second.links) todo.push_back(l);
    }
  }
  return seen;
}

std::map<std::string, std::string> library_of_folder(
    const std::map<std::string, Library>& libraries) {
  std::map<std::string, std::string> out;
  for (const auto& [name, lib] : libraries) out[lib.folder] = name;
  return out;
}

// Outside headers and the package that brings each (its CMake name).
const std::vector<std::pair<std::string, std::string>> kPackageHeaders = {
    {"boost/", "Boost::headers"},
    {"toml++/", "PkgConfig::TOMLPLUSPLUS"},
    {"systemd/", "PkgConfig::LIBSYSTEMD"},
    {"bpf/bpf.h", "PkgConfig::LIBBPF"},
    {"bpf/libbpf.h", "PkgConfig::LIBBPF"},
    {"zstd.h", "PkgConfig::ZSTD"},
    {"capstone/", "PkgConfig::CAPSTONE"},
    {"elfutils/", "PkgConfig::LIBDW"},
    {"nlohmann/", "nlohmann_json::nlohmann_json"},
    {"CLI/", "CLI11::CLI11"},
};

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
  std::string file;  // relative to the root, e.g. "mapper/process_table.h"
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
  for (const auto& [folder, library] : library_of_folder(libraries_of_build())) {
    if (folder.empty()) continue;
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

TEST(IncludeLayering, TheBuildIsReadAndEveryFolderHasIncludes) {
  const auto libraries = libraries_of_build();
  const auto folders_of_build = library_of_folder(libraries);
  // The layers and every room the issue of the split named.
  for (const char* folder :
       {"record", "mapper", "output", "bpf", "collector/host", "collector/records", "collector/aux",
        "collector/pipeline", "collector/input", "collector/live", "collector/session",
        "collector/kernel", "collector/service", "collector/doctor", "collector/cli"}) {
    EXPECT_TRUE(folders_of_build.count(folder)) << folder << " is no library of the build";
  }
  std::set<std::string> folders;
  for (const Include& inc : includes_of_tree()) folders.insert(folder_of(inc.file));
  for (const auto& [folder, library] : folders_of_build) {
    if (!folder.empty()) EXPECT_TRUE(folders.count(folder)) << folder;
  }
  // Every .cpp of the tree belongs to a library: no folder is left outside the build.
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / "collector")) {
    if (entry.is_directory())
      EXPECT_TRUE(folders_of_build.count(fs::relative(entry.path(), kRoot).generic_string()))
          << entry.path();
  }
}

TEST(IncludeLayering, AFolderIncludesOnlyWhatItsLibraryLinks) {
  const auto libraries = libraries_of_build();
  const auto library_of = library_of_folder(libraries);
  for (const Include& inc : includes_of_tree()) {
    const std::string from = folder_of(inc.file);
    const std::set<std::string> reach = closure_of(libraries, library_of.at(from));
    if (!inc.quoted) {
      for (const auto& [prefix, package] : kPackageHeaders) {
        if (inc.target.starts_with(prefix)) {
          EXPECT_TRUE(reach.count(package))
              << where(inc) << ": " << library_of.at(from) << " does not link " << package;
        }
      }
      continue;
    }
    const std::string to = folder_of(inc.target);
    ASSERT_TRUE(fs::exists(kRoot / source_of(inc.target)))
        << where(inc) << ": no such file in the tree";
    auto to_library = library_of.find(to);
    ASSERT_NE(to_library, library_of.end())
        << where(inc) << ": includes a folder outside the libraries";
    EXPECT_TRUE(reach.count(to_library->second))
        << where(inc) << ": " << library_of.at(from) << " does not link " << to_library->second;
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
        for (auto it = std::find(path.begin(), path.end(), next); it != path.end(); ++it)
          cycle += *it + " -> ";
        ADD_FAILURE() << "cycle between folders: " << cycle << next;
      } else if (state[next] == 0) {
        visit(next);
      }
    }
    path.pop_back();
    state[f] = 2;
  };
  for (const auto& [folder, library] : library_of_folder(libraries_of_build())) {
    if (!folder.empty() && state[folder] == 0) visit(folder);
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

// bpftool writes a C bool of the BPF program as `_Bool`, which clang++ does not know in strict
// C++; bpf/NAME_skeleton.h makes the generated header includable, so only it includes it.
TEST(IncludeLayering, SkeletonsAreIncludedThroughTheirCppWrapperOnly) {
  static const std::string kSkeleton = ".skel.h";
  for (const Include& inc : includes_of_tree()) {
    if (inc.target.size() <= kSkeleton.size() ||
        inc.target.compare(inc.target.size() - kSkeleton.size(), kSkeleton.size(), kSkeleton) !=
            0) {
      continue;
    }
    const std::string wrapper =
        inc.target.substr(0, inc.target.size() - kSkeleton.size()) + "_skeleton.h";
    EXPECT_EQ(inc.file, wrapper) << where(inc) << ": include " << wrapper << " instead";
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
