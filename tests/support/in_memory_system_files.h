// The machine's files as a test makes them up: a map from path to content, whose directories
// are listed from the paths beneath them (the probes of cpu_capabilities.h, spe_pmu.h and
// machine_facts.h read only through SystemFiles).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collector/live/cpu_capabilities.h"

namespace profcollect::test {

class InMemorySystemFiles : public SystemFiles {
 public:
  std::map<std::string, std::string> files;

  std::optional<std::string> read(const std::string& path) const override {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> list(const std::string& directory) const override {
    std::set<std::string> names;
    const std::string prefix = directory + "/";
    for (const auto& [path, content] : files) {
      if (path.starts_with(prefix))
        names.insert(path.substr(prefix.size(), path.find('/', prefix.size()) - prefix.size()));
    }
    return {names.begin(), names.end()};
  }
};

}  // namespace profcollect::test
