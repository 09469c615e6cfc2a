// Samples in a module are attributed to it live, by the module's memory as /proc/modules gives
// it. This machine's kernel has no modules, so a /proc/modules of the test's own declares one
// over the memory of a real kernel function the load runs (read_zero, /dev/zero's read, its
// bounds taken from /proc/kallsyms: its address to the next symbol's): its samples must then be
// counted for that module -- in kernel.json and in the summary -- and no longer for the kernel
// function, while the kernel's other functions stay the kernel's. Given the module's .ko (and no
// /sys/module listing), the module is placed by its kallsyms symbol and its own profile holds
// exactly the samples counted for its memory.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "collector/kernel/kernel_collection.h"
#include "tests/integration/quiet_logger.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

// A module declared over read_zero's memory (/proc/modules of the test's own), the syscall load
// that runs read_zero on every CPU, and a kernel collection of it.
class KernelModuleAttribution : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "system-wide kernel samples need root (or CAP_PERFMON)";
    if (!have_executable("gcc")) GTEST_SKIP() << "gcc is not installed";
    // read_zero's bounds: its address and the next text symbol's.
    std::map<uint64_t, std::string> text;
    {
      std::ifstream in("/proc/kallsyms");
      std::string address, type, name, rest;
      while (in >> address >> type >> name) {
        std::getline(in, rest);
        if (rest.empty() && (type == "t" || type == "T"))
          text[std::stoull(address, nullptr, 16)] = name;
      }
    }
    for (auto it = text.begin(); it != text.end(); ++it) {
      if (it->second == "read_zero" && std::next(it) != text.end()) {
        start_ = it->first;
        end_ = std::next(it)->first;
      }
    }
    if (!start_) GTEST_SKIP() << "this kernel has no read_zero";
    ASSERT_GT(end_, start_);
    char line[160];
    std::snprintf(line, sizeof line, "fake_mod %llu 0 - Live 0x%llx\n",
                  static_cast<unsigned long long>(end_ - start_),
                  static_cast<unsigned long long>(start_));
    write_file(dir_ / "modules", line);
    const std::vector<std::string> cc = {
        "gcc", "-O2", "-o", load_.string(),
        (source_dir() / "tests/fixtures/kernel_src/syscall_load.c").string()};
    ASSERT_EQ(run_command(cc).exit_code, 0);
  }

  // Runs the load on every CPU for about 4 s under a kernel collection with `s`.
  KernelCollectionResult collect(KernelCollectionSettings s) {
    s.output_dir = (dir_ / "out").string();
    s.modules_path = (dir_ / "modules").string();
    KernelCollection collection(s, logger_);
    collection.start();
    std::vector<pid_t> loads;
    for (long i = 0; i < 2 * std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)); ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::execl(load_.c_str(), load_.c_str(), "3", static_cast<char*>(nullptr));
        ::_exit(127);
      }
      loads.push_back(pid);
    }
    for (int i = 0; i < 40; ++i) {
      ::usleep(100 * 1000);
      collection.drain();
    }
    for (pid_t p : loads) ::waitpid(p, nullptr, 0);
    return collection.finish();
  }

  TempDir dir_;
  const std::filesystem::path load_ = dir_ / "syscall_load";
  uint64_t start_ = 0, end_ = 0;
  QuietLogger logger_;
};

TEST_F(KernelModuleAttribution, SamplesInAModulesMemoryAreCountedForTheModule) {
  const KernelCollectionResult r = collect({});
  ASSERT_TRUE(r.ok) << logger_.text();
  ASSERT_FALSE(r.symbolized);

  const nlohmann::json kernel = nlohmann::json::parse(read_file(dir_ / "out" / "kernel.json"));
  ASSERT_TRUE(kernel["modules"].contains("fake_mod")) << kernel.dump(2);
  const uint64_t in_module = kernel["modules"]["fake_mod"].get<uint64_t>();
  EXPECT_GT(in_module, 0u) << kernel.dump(2);
  EXPECT_EQ(kernel["module_samples"].get<uint64_t>(), in_module);
  EXPECT_EQ(r.module_samples, in_module);
  EXPECT_EQ(kernel["module_profiles"], nlohmann::json::array()) << "no .ko of the module was given";
  const std::string functions = read_file(std::filesystem::path(r.profile_dir) / "functions.txt");
  EXPECT_EQ(functions.find(" read_zero kernel"), std::string::npos)
      << "read_zero's samples are the module's now";
  EXPECT_NE(functions.find(" kernel\n"), std::string::npos)
      << "the kernel's other functions stay the kernel's";
}

// With the module's .ko under the modules directory and no /sys/module listing, the module is
// placed by its symbol in kallsyms and gets a profile of its own holding every sample taken in
// its memory: a .ko whose one function, in a section of its own, spans more than read_zero.
TEST_F(KernelModuleAttribution, AModuleWithItsKoPlacedByKallsymsGetsEverySampleInItsProfile) {
  if (!have_executable("clang-19")) GTEST_SKIP() << "clang-19 is not installed";
  write_file(dir_ / "big.c",
             "void fake_mod_big(void) { __asm__ volatile(\".rept 8192\\n nop\\n .endr\"); }\n");
  std::filesystem::create_directories(dir_ / "lib-modules/extra");
  const std::vector<std::string> cc = {"clang-19",
                                       "-O1",
                                       "-g",
                                       "-ffunction-sections",
                                       "-fno-pic",
                                       "-mcmodel=kernel",
                                       "-ffreestanding",
                                       "-c",
                                       (dir_ / "big.c").string(),
                                       "-o",
                                       (dir_ / "lib-modules/extra/fake-mod.ko").string()};
  const CommandResult built = run_command(cc);
  ASSERT_EQ(built.exit_code, 0) << built.describe(cc);
  // kallsyms as the kernel would list it with the module loaded: its function at the start of
  // the module's memory.
  char line[160];
  std::snprintf(line, sizeof line, "%016llx t fake_mod_big\t[fake_mod]\n",
                static_cast<unsigned long long>(start_));
  write_file(dir_ / "kallsyms", read_file("/proc/kallsyms") + line);

  KernelCollectionSettings s;
  s.modules_dir = (dir_ / "lib-modules").string();
  s.sys_module = (dir_ / "no-sys-module").string();
  s.kallsyms_path = (dir_ / "kallsyms").string();
  const KernelCollectionResult r = collect(s);
  ASSERT_TRUE(r.ok) << logger_.text();
  const nlohmann::json kernel = nlohmann::json::parse(read_file(dir_ / "out" / "kernel.json"));
  const uint64_t in_module = kernel["modules"].value("fake_mod", uint64_t{0});
  ASSERT_GT(in_module, 0u) << kernel.dump(2);
  EXPECT_EQ(kernel["module_profiles"], nlohmann::json::array({"fake_mod"})) << kernel.dump(2);
  EXPECT_EQ(kernel["modules_placed_by_kallsyms"], nlohmann::json::array({"fake_mod"}))
      << kernel.dump(2);

  // The module's profile directory (named after the .ko) holds exactly the module's samples.
  std::filesystem::path profile;
  for (const auto& e : std::filesystem::directory_iterator(dir_ / "out")) {
    if (e.is_directory() && e.path().filename().string().starts_with("fake-mod.ko-"))
      profile = e.path();
  }
  ASSERT_FALSE(profile.empty()) << "no profile of the module in " << (dir_ / "out") << "\n"
                                << logger_.text();
  const nlohmann::json meta = nlohmann::json::parse(read_file(profile / "meta.json"));
  EXPECT_EQ(meta["samples"].get<uint64_t>(), in_module) << meta.dump(2);
  uint64_t total = 0;
  std::istringstream ips(read_file(profile / "samples.ip"));
  std::string address;
  uint64_t count = 0;
  while (ips >> address >> count) total += count;
  EXPECT_EQ(total, in_module);
}

}  // namespace
}  // namespace profcollect::test
