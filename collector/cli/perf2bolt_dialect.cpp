#include "collector/cli/perf2bolt_dialect.h"

#include <cctype>
#include <string_view>

#include "collector/cli/cli_error.h"

namespace profcollect {

namespace {

enum class Takes { Value, Nothing, Dropped };

// perf2bolt's options that convert does too, by its name (LLVM 19's perf2bolt; `-ba` and
// `--basic-events` are later releases' names of `-nl`).
struct Taken {
  std::string_view name;
  std::string_view ours;  // empty: accepted and dropped
  Takes takes;
};
constexpr Taken kTaken[] = {
    {"perfdata", "--perfdata", Takes::Value},
    {"nl", "--nl", Takes::Nothing},
    {"ba", "--nl", Takes::Nothing},
    {"basic-events", "--nl", Takes::Nothing},
    {"ignore-build-id", "--ignore-build-id", Takes::Nothing},
    {"pid", "--pid", Takes::Value},
    // The recording says whether it holds Arm SPE data; perf2bolt needs to be told.
    {"spe", "", Takes::Dropped},
};

// perf2bolt's options for what convert does not do, and why.
struct Refused {
  std::string_view name;
  std::string_view why;
};
constexpr Refused kRefused[] = {
    {"w",
     "YAML profiles are not written; convert writes BOLT's fdata (-o) and its pre-aggregated "
     "profile (--format preagg)"},
    {"pa",
     "pre-aggregated profiles are written (--format preagg), not read; give the perf.data with -p"},
    {"itrace",
     "instruction traces (Intel PT) are not read; convert takes IP samples, branch stacks and "
     "Arm SPE records"},
    {"heatmap", "heat maps are not drawn (llvm-bolt-heatmap draws them)"},
};

const Taken* taken(std::string_view name) {
  for (const Taken& t : kTaken)
    if (t.name == name) return &t;
  return nullptr;
}

const Refused* refused(std::string_view name) {
  for (const Refused& r : kRefused)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace

Perf2boltRewrite from_perf2bolt_dialect(const std::vector<std::string>& args) {
  Perf2boltRewrite out;
  for (const std::string& a : args) {
    // -name, --name, -name=value, --name=value; a lone "-" (standard input) and numbers are values.
    const size_t dashes = a.starts_with("--") ? 2 : a.starts_with("-") ? 1 : 0;
    if (dashes == 0 || a.size() <= dashes || !std::isalpha(static_cast<unsigned char>(a[dashes]))) {
      out.args.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    const std::string name =
        a.substr(dashes, eq == std::string::npos ? std::string::npos : eq - dashes);
    const std::string spelled = a.substr(0, eq);
    if (name == "profile-format" && eq != std::string::npos && a.substr(eq + 1) == "fdata")
      continue;  // the default
    if (name == "profile-format") {
      throw CliError(
          spelled +
              ": YAML profiles are not written; convert writes BOLT's fdata (-o) and its "
              "pre-aggregated profile (--format preagg)",
          2);
    }
    if (const Refused* r = refused(name))
      throw CliError(spelled + ": not taken: " + std::string(r->why), 2);
    if (const Taken* t = taken(name)) {
      if (t->takes == Takes::Dropped) continue;
      out.args.emplace_back(t->ours);
      if (eq != std::string::npos) {
        if (t->takes == Takes::Nothing) throw CliError(spelled + " takes no value", 2);
        out.args.push_back(a.substr(eq + 1));
      }
      continue;
    }
    // One dash and a word: perf2bolt's spelling of an option convert does not know. CLI11 would
    // take `-perfdta=x` as -p with the value "erfdta=x".
    if (dashes == 1 && name.size() > 1 && !out.unknown) out.unknown = spelled;
    out.args.push_back(a);
  }
  return out;
}

std::vector<std::string> perf2bolt_spellings() {
  std::vector<std::string> out;
  for (const Taken& t : kTaken) out.push_back("-" + std::string(t.name));
  return out;
}

}  // namespace profcollect
