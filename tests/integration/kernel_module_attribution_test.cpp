// Samples in a module are attributed to it live, by the module's memory as /proc/modules gives
// it. This machine's kernel has no modules, so a /proc/modules of the test's own declares one
// over the memory of a real kernel function the load runs (read_zero, /dev/zero's read, its
// bounds taken from /proc/kallsyms: its address to the next symbol's): its samples must then be
// counted for that module -- in kernel.json and in the summary -- and no longer for the kernel
// function, while the kernel's other functions stay the kernel's.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "collector/kernel_collection.h"
#include "tests/integration/quiet_logger.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

TEST(KernelModuleAttribution, SamplesInAModulesMemoryAreCountedForTheModule) {
  if (::geteuid() != 0) GTEST_SKIP() << "system-wide kernel samples need root (or CAP_PERFMON)";
  if (!have_executable("gcc")) GTEST_SKIP() << "gcc is not installed";
  // read_zero's bounds: its address and the next text symbol's.
  std::map<uint64_t, std::string> text;
  {
    std::ifstream in("/proc/kallsyms");
    std::string address, type, name, rest;
    while (in >> address >> type >> name) {
      std::getline(in, rest);
      if (rest.empty() && (type == "t" || type == "T")) text[std::stoull(address, nullptr, 16)] = name;
    }
  }
  uint64_t start = 0, end = 0;
  for (auto it = text.begin(); it != text.end(); ++it) {
    if (it->second == "read_zero" && std::next(it) != text.end()) {
      start = it->first;
      end = std::next(it)->first;
    }
  }
  if (!start) GTEST_SKIP() << "this kernel has no read_zero";
  ASSERT_GT(end, start);

  TempDir dir;
  char line[160];
  std::snprintf(line, sizeof line, "fake_mod %llu 0 - Live 0x%llx\n", static_cast<unsigned long long>(end - start),
                static_cast<unsigned long long>(start));
  write_file(dir / "modules", line);
  const std::filesystem::path load = dir / "syscall_load";
  const std::vector<std::string> cc = {"gcc", "-O2", "-o", load.string(),
                                       (source_dir() / "tests/fixtures/kernel_src/syscall_load.c").string()};
  ASSERT_EQ(run_command(cc).exit_code, 0);

  KernelCollectionSettings s;
  s.output_dir = (dir / "out").string();
  s.modules_path = (dir / "modules").string();
  QuietLogger logger;
  KernelCollection collection(s, logger);
  collection.start();
  std::vector<pid_t> loads;
  for (long i = 0; i < 2 * std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)); ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl(load.c_str(), load.c_str(), "3", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    loads.push_back(pid);
  }
  for (int i = 0; i < 40; ++i) {
    ::usleep(100 * 1000);
    collection.drain();
  }
  for (pid_t p : loads) ::waitpid(p, nullptr, 0);
  const KernelCollectionResult r = collection.finish();
  ASSERT_TRUE(r.ok) << logger.text();
  ASSERT_FALSE(r.symbolized);

  const nlohmann::json kernel = nlohmann::json::parse(read_file(dir / "out" / "kernel.json"));
  ASSERT_TRUE(kernel["modules"].contains("fake_mod")) << kernel.dump(2);
  const uint64_t in_module = kernel["modules"]["fake_mod"].get<uint64_t>();
  EXPECT_GT(in_module, 0u) << kernel.dump(2);
  EXPECT_EQ(kernel["module_samples"].get<uint64_t>(), in_module);
  EXPECT_EQ(r.module_samples, in_module);
  const std::string functions = read_file(std::filesystem::path(r.profile_dir) / "functions.txt");
  EXPECT_EQ(functions.find(" read_zero kernel"), std::string::npos) << "read_zero's samples are the module's now";
  EXPECT_NE(functions.find(" kernel\n"), std::string::npos) << "the kernel's other functions stay the kernel's";
}

}  // namespace
}  // namespace profcollect::test
