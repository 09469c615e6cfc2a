// Helpers the integration tests share: running a command and capturing what it prints, temporary
// directories, and where the repository, the build tree and the profcollect executable are.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace profcollect::test {

// What a finished command did. `exit_code` is the exit status, or 128 + signal number when a
// signal ended it, or -1 when it could not be started (then `err` says why).
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  bool timed_out = false;

  // "`perf script ...` exited 1; stderr: ..." for assertion messages.
  std::string describe(const std::vector<std::string>& argv) const;
};

struct RunOptions {
  std::filesystem::path cwd;  // empty: the test's current directory
  std::chrono::seconds timeout{300};
};

// Runs argv[0] (looked up in PATH) with the arguments, stdin from /dev/null, and captures stdout
// and stderr separately. Never throws for a command that fails: the result says how it ended.
CommandResult run_command(const std::vector<std::string>& argv, const RunOptions& options = {});

// The joined command line, for messages.
std::string command_line(const std::vector<std::string>& argv);

// Whether `name` is an executable file (an absolute path, or a name found in PATH).
bool have_executable(const std::string& name);

// The repository root, the build tree and the profcollect executable under test.
std::filesystem::path source_dir();
std::filesystem::path binary_dir();
std::filesystem::path profcollect_exe();

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }
  // Names of the entries directly in the directory, sorted.
  std::vector<std::string> entries() const;

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, std::string_view content);

// Lines of `text` without their '\n'; a final newline does not make an empty last line.
std::vector<std::string> split_lines(std::string_view text);

// Whether `text` contains `needle`, ignoring ASCII case.
bool contains_ignoring_case(std::string_view text, std::string_view needle);

}  // namespace profcollect::test
