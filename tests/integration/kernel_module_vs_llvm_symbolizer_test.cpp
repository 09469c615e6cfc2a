// Samples in a kernel module (a stand-in .ko: ET_REL with DWARF, one section per function, laid
// out in module memory in reverse, so .text is not first) are translated to the section and the
// section-relative address llvm-symbolizer-19 attributes as the sampled code. The layout comes
// three ways: given (the library), and as live kernel profiles find it through the kernel image
// selector, from a modules directory holding the .ko: by /sys/module/NAME/sections, or, where
// that is missing, by the module's /proc/kallsyms symbols matched against the .ko's. In an ET_REL file
// every section starts at address 0, so llvm-symbolizer is given a copy whose sections objcopy
// has placed where the module's memory had them; it must name, for the address we translate
// each sample to, the very function and line it names for the address the sample was taken at;
// and our own DWARF reader, through which module profiles are made (the .ko's DWARF relocated by
// libdwfl against its image addresses), must name that function and line at the address the
// sample resolves to.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include <fstream>

#include "collector/kernel/kernel_image_selector.h"
#include "mapper/image_resolver.h"
#include "mapper/image_translator.h"
#include "mapper/target_image_selector.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kStart = 0xffffffffc0a40000, kLength = 0x8000;
constexpr uint32_t kPid = 4242;  // the task a kernel sample interrupted: any process
const std::vector<std::string> kFunctions = {"mod_open", "mod_read", "mod_write", "mod_exit"};

std::string hex(uint64_t v) {
  std::ostringstream out;
  out << "0x" << std::hex << v;
  return out.str();
}

// llvm-symbolizer-19's answer per address: "function\nfile:line:column".
std::vector<std::string> symbolize(const fs::path& object, const std::vector<uint64_t>& addresses) {
  std::vector<std::string> argv = {"llvm-symbolizer-19", "--obj=" + object.string()};
  for (uint64_t a : addresses) argv.push_back(hex(a));
  const CommandResult run = run_command(argv);
  EXPECT_EQ(run.exit_code, 0) << run.describe(argv);
  std::vector<std::string> answers;
  std::string current;
  for (const std::string& line : split_lines(run.out)) {
    if (line.empty()) {
      if (!current.empty()) answers.push_back(current);
      current.clear();
    } else {
      current += (current.empty() ? "" : "\n") + line;
    }
  }
  if (!current.empty()) answers.push_back(current);
  return answers;
}

enum class LayoutSource { Given, SysModuleSections, KallsymsSymbols };

std::ostream& operator<<(std::ostream& os, LayoutSource s) {
  return os << (s == LayoutSource::Given               ? "Given"
                : s == LayoutSource::SysModuleSections ? "SysModuleSections"
                                                       : "KallsymsSymbols");
}

class KernelModuleVsLlvmSymbolizer : public ::testing::TestWithParam<LayoutSource> {};

TEST_P(KernelModuleVsLlvmSymbolizer,
       EverySampleTranslatesToWhatLlvmSymbolizerAttributesAtItsAddress) {
  for (const char* tool : {"clang-19", "objcopy", "llvm-symbolizer-19", "nm"}) {
    if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
  }
  TempDir dir;
  const fs::path ko = dir / "fake-mod.ko", placed = dir / "fake-mod.placed.ko";
  const std::vector<std::string> cc = {
      "clang-19",
      "-O1",
      "-g",
      "-ffunction-sections",
      "-fno-pic",
      "-mcmodel=kernel",
      "-ffreestanding",
      "-c",
      (source_dir() / "tests/fixtures/kernel_src/fake_module.c").string(),
      "-o",
      ko.string()};
  CommandResult run = run_command(cc);
  ASSERT_EQ(run.exit_code, 0) << run.describe(cc);

  // Each function's section, from the end of the module's memory downwards: .text.mod_open,
  // first in the file, is last in memory.
  std::shared_ptr<const ElfBinary> elf = ElfBinary::open(ko.string());
  ModuleLayout layout;
  layout.start = kStart;
  std::map<std::string, uint64_t> runtime;  // section name -> runtime address
  std::vector<std::string> objcopy = {"objcopy"};
  uint64_t at = kStart + 0x7000;
  for (const std::string& f : kFunctions) {
    const std::string section = ".text." + f;
    at -= 0x800;
    runtime[section] = at;
    layout.sections.push_back({section, at});
    objcopy.insert(objcopy.end(), {"--change-section-address", section + "=" + hex(at - kStart)});
  }
  objcopy.insert(objcopy.end(), {ko.string(), placed.string()});
  run = run_command(objcopy);
  ASSERT_EQ(run.exit_code, 0) << run.describe(objcopy);

  // nm: each function's size (its address is 0, the start of its section).
  run = run_command({"nm", "-S", "--defined-only", ko.string()});
  std::map<std::string, uint64_t> sizes;
  for (const std::string& line : split_lines(run.out)) {
    std::istringstream in(line);
    std::string address, size, type, name;
    if (in >> address >> size >> type >> name) sizes[name] = std::stoull(size, nullptr, 16);
  }

  std::unique_ptr<ImageSelector> selector;
  if (GetParam() == LayoutSource::Given) {
    BinaryIdentity id;
    id.path = ko;
    auto image = std::make_shared<LoadedImage>(elf, id, ImageLoadOptions{},
                                               ImageTranslator::kernel_module(*elf, layout));
    selector = std::make_unique<TargetImageSelector>(image, false, nullptr);
  } else {
    // A modules directory holding the .ko (found by the module's name, '-' read as '_'); the
    // runtime addresses as the running kernel publishes them.
    KernelImageSelection selection;
    selection.modules_dir = (dir / "lib-modules").string();
    fs::create_directories(dir / "lib-modules/kernel/drivers");
    fs::copy_file(ko, dir / "lib-modules/kernel/drivers/fake-mod.ko");
    selection.sys_module = (dir / "sys-module").string();
    if (GetParam() == LayoutSource::SysModuleSections) {
      const fs::path sections = dir / "sys-module/fake_mod/sections";
      fs::create_directories(sections);
      for (const auto& [section, address] : runtime)
        write_file(sections / section, hex(address) + "\n");
      write_file(sections / ".data",
                 hex(kStart + 0x7800) + "\n");  // not code: placed, never sampled
    } else {
      // kallsyms lists the module's functions at their runtime addresses (nm gives each one's
      // offset in its section), among the kernel's own and another module's.
      run = run_command({"nm", "--defined-only", ko.string()});
      for (const std::string& line : split_lines(run.out)) {
        std::istringstream in(line);
        std::string address, type, name;
        if (!(in >> address >> type >> name) || (type != "t" && type != "T")) continue;
        const std::string section = ".text." + name;
        if (!runtime.count(section)) continue;
        selection.kallsyms.push_back(
            {runtime.at(section) + std::stoull(address, nullptr, 16), name, "fake_mod"});
      }
      ASSERT_EQ(selection.kallsyms.size(), kFunctions.size()) << run.out;
      selection.kallsyms.push_back({0xffffffff81000000, "mod_read", ""});  // the kernel's
      selection.kallsyms.push_back(
          {kStart + 0x100000, "mod_write", "other_mod"});  // another module's
    }
    selector = std::make_unique<KernelImageSelector>(selection);
  }
  ProcessTable processes;
  MmapRecord mmap;
  mmap.pid = ProcessTable::kKernelPid;
  mmap.start = kStart;
  mmap.len = kLength;
  mmap.cpumode = CpuMode::Kernel;
  mmap.filename = "[fake_mod]";
  processes.on_mmap(mmap);
  ImageResolver resolver(*selector);
  const LoadedImage* image = nullptr;

  // A sample on every byte of every function: where it was taken (its offset into the placed
  // module) and where we translate it to (the placed address of the section we name).
  std::vector<uint64_t> taken, translated;
  std::vector<std::string> ours_dwarf;  // innermost "function:line"
  for (const std::string& f : kFunctions) {
    ASSERT_GT(sizes[f], 1u) << f;
    for (uint64_t offset = 0; offset < sizes[f]; ++offset) {
      const uint64_t address = runtime.at(".text." + f) + offset;
      const ResolvedAddress r = resolver.resolve(processes, kPid, address, CpuMode::Kernel);
      ASSERT_EQ(r.outcome, SampleOutcome::Mapped) << f << "+" << offset;
      if (image == nullptr) {
        image = resolver.image(r.image);
        ASSERT_NE(image, nullptr);
        ASSERT_EQ(image->kind(), ImageKind::KernelModule);
        ASSERT_NE(image->debug(), nullptr) << image->debug_error();
      }
      ASSERT_LT(r.section, elf->sections().size());
      const std::string& section = elf->sections()[r.section].name;
      ASSERT_TRUE(runtime.count(section)) << f << "+" << offset << ": section " << section;
      taken.push_back(address - kStart);
      // The image address less its section's is the section-relative address.
      translated.push_back(runtime.at(section) - kStart + r.vaddr -
                           elf->sections()[r.section].addr);
      // The function and line our DWARF reader (relocated by libdwfl) names there.
      const InlineStack& stack = image->debug()->dwarf().symbolize(r.vaddr);
      ASSERT_FALSE(stack.empty()) << f << "+" << offset;
      ours_dwarf.push_back(std::string(stack.back().name) + ":" +
                           std::to_string(stack.back().line));
    }
  }
  const std::vector<std::string> truth = symbolize(placed, taken),
                                 ours = symbolize(placed, translated);
  ASSERT_EQ(truth.size(), taken.size());
  ASSERT_EQ(ours.size(), truth.size());
  size_t index = 0;
  for (const std::string& f : kFunctions) {
    for (uint64_t offset = 0; offset < sizes[f]; ++offset, ++index) {
      EXPECT_TRUE(truth[index].starts_with(f + "\n"))
          << "llvm-symbolizer at " << f << "+" << offset << ": " << truth[index];
      EXPECT_EQ(ours[index], truth[index]) << f << "+" << offset;
      // llvm-symbolizer's innermost frame: "function\nfile:line:column".
      const std::string& answer = truth[index];
      const size_t newline = answer.find('\n');
      const size_t line_end = answer.find('\n', newline + 1);
      const std::string location = answer.substr(newline + 1, line_end - newline - 1);
      const size_t last = location.rfind(':'), before = location.rfind(':', last - 1);
      EXPECT_EQ(ours_dwarf[index],
                answer.substr(0, newline) + ":" + location.substr(before + 1, last - before - 1))
          << f << "+" << offset;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, KernelModuleVsLlvmSymbolizer,
                         ::testing::Values(LayoutSource::Given, LayoutSource::SysModuleSections,
                                           LayoutSource::KallsymsSymbols),
                         [](const ::testing::TestParamInfo<LayoutSource>& info) {
                           std::ostringstream name;
                           name << info.param;
                           return name.str();
                         });

}  // namespace
}  // namespace profcollect::test
