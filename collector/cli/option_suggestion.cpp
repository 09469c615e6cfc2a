#include "collector/cli/option_suggestion.h"

#include "collector/cli/perf2bolt_dialect.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace profcollect {

namespace {

void collect_spellings(CLI::App& app, std::vector<std::string>& out) {
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& s : o->get_snames()) out.push_back("-" + s);
    for (const std::string& l : o->get_lnames()) out.push_back("--" + l);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    collect_spellings(*sub, out);
}

}  // namespace

std::vector<std::string> option_spellings(CLI::App& app) {
  std::vector<std::string> out;
  collect_spellings(app, out);
  // perf2bolt's one-dash spellings, rewritten before parsing.
  for (std::string& s : perf2bolt_spellings()) out.push_back(std::move(s));
  return out;
}

bool is_known_option(CLI::App& app, const std::string& name) {
  const auto all = option_spellings(app);
  return std::find(all.begin(), all.end(), name) != all.end();
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_option(CLI::App& app, const std::string& name) {
  std::optional<std::string> best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& s : option_spellings(app)) {
    if (s.size() <= 2) continue;  // a one-letter option is no suggestion for a typo
    const size_t d = edit_distance(name, s);
    if (d < best_distance) {
      best_distance = d;
      best = s;
    }
  }
  // Close enough: at most a third of the longer word, and at least one letter in common.
  if (!best || best_distance == 0 || best_distance * 3 > std::max(name.size(), best->size()))
    return std::nullopt;
  return best;
}

}  // namespace profcollect
