// The kernel image and kernel modules through the one resolver: a stand-in vmlinux (linked at
// the kernel's address with _text and _stext, tests/fixtures/kernel_src/) behind a kernel MMAP
// record whose _text is slid as KASLR slides it, and a stand-in module (an ET_REL object, with
// and without -ffunction-sections) at a runtime base, .text at the start of its memory or not.
// Built at test time; judged by nm (function addresses and sizes) and readelf (the section of
// each function symbol).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>

#include "mapper/image_resolver.h"
#include "mapper/image_translator.h"
#include "mapper/target_image_selector.h"
#include "tests/support/allocation_counter.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

struct NmSymbol {
  uint64_t addr = 0, size = 0;
  char type = 0;
};

// nm -S --defined-only: "ADDR [SIZE] TYPE NAME".
std::map<std::string, NmSymbol> nm_symbols(const std::filesystem::path& file) {
  const std::vector<std::string> argv = {"nm", "-S", "--defined-only", file.string()};
  CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
  std::map<std::string, NmSymbol> out;
  for (const std::string& line : split_lines(r.out)) {
    std::istringstream in(line);
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    NmSymbol s;
    s.addr = std::stoull(f.at(0), nullptr, 16);
    if (f.size() == 4) s.size = std::stoull(f[1], nullptr, 16);
    s.type = f.at(f.size() - 2)[0];
    out[f.back()] = s;
  }
  return out;
}

// readelf -sW: the section index (Ndx) of each defined symbol.
std::map<std::string, uint32_t> readelf_symbol_sections(const std::filesystem::path& file) {
  const std::vector<std::string> argv = {"readelf", "-sW", file.string()};
  CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << r.describe(argv);
  std::map<std::string, uint32_t> out;
  for (const std::string& line : split_lines(r.out)) {
    std::istringstream in(line);
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    // Num: Value Size Type Bind Vis Ndx Name
    if (f.size() != 8 || f[0].back() != ':' || f[3] != "FUNC") continue;
    out[f[7]] = static_cast<uint32_t>(std::stoul(f[6]));
  }
  return out;
}

std::string readelf_build_id(const std::filesystem::path& file) {
  CommandResult r = run_command({"readelf", "-n", file.string()});
  auto pos = r.out.find("Build ID: ");
  if (pos == std::string::npos) return "";
  return r.out.substr(pos + 10, r.out.find('\n', pos) - pos - 10);
}

const std::vector<std::string> kKernelFunctions = {"kernel_alpha", "kernel_beta", "kernel_gamma",
                                                   "kernel_entry"};
const std::vector<std::string> kModuleFunctions = {"mod_open", "mod_read", "mod_write", "mod_exit"};

// A kernel MMAP record as perf writes it: pid -1, pgoff the runtime address of the symbol the
// name ends with.
MmapRecord kernel_mmap(const char* name, uint64_t start, uint64_t len, uint64_t pgoff) {
  MmapRecord r;
  r.pid = ProcessTable::kKernelPid;
  r.tid = 0;
  r.start = start;
  r.len = len;
  r.pgoff = pgoff;
  r.cpumode = CpuMode::Kernel;
  r.filename = name;
  return r;
}

constexpr uint32_t kPid = 4242;  // the task a kernel sample interrupted: any process

class KernelImageResolver : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"gcc", "ld", "nm", "readelf"}) {
      if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
    }
    const auto src = source_dir() / "tests/fixtures/kernel_src";
    const std::vector<std::string> cc = {"gcc",
                                         "-O1",
                                         "-fno-pic",
                                         "-mcmodel=kernel",
                                         "-ffreestanding",
                                         "-fno-asynchronous-unwind-tables",
                                         "-c",
                                         (src / "fake_vmlinux.c").string(),
                                         "-o",
                                         (dir_ / "vmlinux.o").string()};
    CommandResult r = run_command(cc);
    ASSERT_EQ(r.exit_code, 0) << r.describe(cc);
    const std::vector<std::string> ld = {"ld",
                                         "-T",
                                         (src / "fake_vmlinux.ld").string(),
                                         "--build-id",
                                         "-o",
                                         vmlinux().string(),
                                         (dir_ / "vmlinux.o").string()};
    r = run_command(ld);
    ASSERT_EQ(r.exit_code, 0) << r.describe(ld);
    nm_ = nm_symbols(vmlinux());
    for (const char* s : {"_text", "_stext", "counter"}) ASSERT_TRUE(nm_.count(s)) << s;
    for (const auto& f : kKernelFunctions) ASSERT_GT(nm_[f].size, 1u) << f;
    ASSERT_NE(nm_["_text"].addr, nm_["_stext"].addr);
  }

  std::filesystem::path vmlinux() const { return dir_ / "vmlinux"; }

  // Every function of the stand-in, sampled halfway in at its slid address, resolves to nm's
  // address of that point.
  void expect_functions_resolve(ImageResolver& resolver, const ProcessTable& processes,
                                uint64_t slide) {
    for (const auto& f : kKernelFunctions) {
      const uint64_t in_image = nm_[f].addr + nm_[f].size / 2;
      const ResolvedAddress r =
          resolver.resolve(processes, kPid, in_image + slide, CpuMode::Kernel);
      EXPECT_EQ(r.outcome, SampleOutcome::Mapped) << f;
      EXPECT_EQ(r.vaddr, in_image)
          << f << std::hex << ": got 0x" << r.vaddr << ", nm says 0x" << in_image;
      EXPECT_EQ(r.section, 0u) << f;
    }
  }

  TempDir dir_;
  std::map<std::string, NmSymbol> nm_;
};

constexpr uint64_t kSlide = 0x1e00000;  // KASLR moves the kernel by multiples of 2 MiB

TEST_F(KernelImageResolver, SlidTextResolvesToTheVmlinuxAddressesNmGives) {
  auto image = LoadedImage::open_file(vmlinux());
  ASSERT_EQ(image->kind(), ImageKind::Kernel);
  ProcessTable processes;
  const uint64_t text = nm_["_text"].addr + kSlide;
  processes.on_mmap(kernel_mmap("[kernel.kallsyms]_text", text, 0x1000000, text));
  TargetImageSelector selector(image, false, nullptr);
  ImageResolver resolver(selector);
  expect_functions_resolve(resolver, processes, kSlide);
  // Once the kernel's image is decided, resolving allocates nothing.
  AllocationCounter allocations;
  for (int i = 0; i < 1000; ++i)
    resolver.resolve(processes, kPid, nm_["kernel_beta"].addr + kSlide, CpuMode::Kernel);
  allocations.stop();
  EXPECT_EQ(allocations.count(), 0u);
  // Data in the kernel's mapping is no code of the image.
  EXPECT_EQ(
      resolver.resolve(processes, kPid, nm_["counter"].addr + kSlide, CpuMode::Kernel).outcome,
      SampleOutcome::NotExecutable);
}

TEST_F(KernelImageResolver, StextNamedMappingSlidesByStext) {
  // Older perf names the mapping after _stext and gives its runtime address.
  auto image = LoadedImage::open_file(vmlinux());
  ProcessTable processes;
  const uint64_t stext = nm_["_stext"].addr + kSlide;
  processes.on_mmap(kernel_mmap("[kernel.kallsyms]_stext", stext, 0x1000000, stext));
  TargetImageSelector selector(image, false, nullptr);
  ImageResolver resolver(selector);
  expect_functions_resolve(resolver, processes, kSlide);
}

TEST_F(KernelImageResolver, BuildIdsDecideWhenTheRecordingListsTheKernels) {
  const auto own = BuildId::from_hex(readelf_build_id(vmlinux()));
  ASSERT_TRUE(own && !own->empty());
  const BuildId other = *BuildId::from_hex("0123456789abcdef0123456789abcdef01234567");
  const uint64_t text = nm_["_text"].addr + kSlide;
  const uint64_t sample = nm_["kernel_beta"].addr + kSlide;
  for (const BuildId* listed : {&*own, &other}) {
    ProcessTable processes;
    processes.on_mmap(kernel_mmap("[kernel.kallsyms]_text", text, 0x1000000, text));
    // perf's build-id table lists the kernel as "[kernel.kallsyms]".
    TargetImageSelector selector(LoadedImage::open_file(vmlinux()), false,
                                 [listed](std::string_view path) -> const BuildId* {
                                   return path == "[kernel.kallsyms]" ? listed : nullptr;
                                 });
    ImageResolver resolver(selector);
    EXPECT_EQ(resolver.resolve(processes, kPid, sample, CpuMode::Kernel).outcome,
              listed == &other ? SampleOutcome::BuildIdMismatch : SampleOutcome::Mapped);
  }
}

TEST_F(KernelImageResolver, KernelSamplesStayKernelWhenNoKernelImageIsSelected) {
  ProcessTable processes;
  const uint64_t text = nm_["_text"].addr + kSlide;
  processes.on_mmap(kernel_mmap("[kernel.kallsyms]_text", text, 0x1000000, text));
  NoImageSelector none;
  ImageResolver resolver(none);
  EXPECT_EQ(
      resolver.resolve(processes, kPid, nm_["kernel_alpha"].addr + kSlide, CpuMode::Kernel).outcome,
      SampleOutcome::Kernel);
}

using ConvertKernelImage = KernelImageResolver;

TEST_F(ConvertKernelImage, PerfScriptKernelSamplesBecomeTheVmlinuxsNoLbrProfile) {
  // perf script text: the kernel's MMAP line with a slid _text, and kernel IPs halfway into
  // three functions, a count each.
  const uint64_t text = nm_["_text"].addr + kSlide;
  char mmap_line[160];
  std::snprintf(mmap_line, sizeof mmap_line,
                "PERF_RECORD_MMAP -1/0: [0x%llx(0x1000000) @ 0x%llx]: x [kernel.kallsyms]_text\n",
                static_cast<unsigned long long>(text), static_cast<unsigned long long>(text));
  std::string script = mmap_line;
  const std::map<std::string, int> counts = {
      {"kernel_alpha", 3}, {"kernel_beta", 5}, {"kernel_gamma", 2}};
  for (const auto& [f, n] : counts) {
    char ip[40];
    std::snprintf(ip, sizeof ip, "     %llx\n",
                  static_cast<unsigned long long>(nm_[f].addr + nm_[f].size / 2 + kSlide));
    for (int i = 0; i < n; ++i) script += ip;
  }
  write_file(dir_ / "kernel.script", script);
  const std::vector<std::string> argv = {profcollect_exe().string(),
                                         "convert",
                                         "-q",
                                         "--perf-script",
                                         (dir_ / "kernel.script").string(),
                                         "-o",
                                         (dir_ / "kernel.fdata").string(),
                                         vmlinux().string()};
  CommandResult r = run_command(argv);
  ASSERT_EQ(r.exit_code, 0) << r.describe(argv);
  // "1 NAME OFFSET COUNT": nm's function, the offset halfway in (hex), the count. A local
  // function is named "name/1" as BOLT names it.
  std::map<std::string, std::pair<uint64_t, int>> got;
  for (const std::string& line : split_lines(read_file(dir_ / "kernel.fdata"))) {
    std::istringstream in(line);
    std::string one, name, offset;
    int count = 0;
    if (!(in >> one >> name >> offset >> count) || one != "1") continue;
    got[name.substr(0, name.find('/'))] = {std::stoull(offset, nullptr, 16), count};
  }
  ASSERT_EQ(got.size(), counts.size()) << read_file(dir_ / "kernel.fdata");
  for (const auto& [f, n] : counts) {
    ASSERT_TRUE(got.count(f)) << f;
    EXPECT_EQ(got[f].first, nm_[f].size / 2) << f;
    EXPECT_EQ(got[f].second, n) << f;
  }
}

class KernelModuleResolver : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    for (const char* tool : {"gcc", "nm", "readelf"}) {
      if (!have_executable(tool)) GTEST_SKIP() << tool << " is not installed";
    }
    std::vector<std::string> cc = {
        "gcc",
        "-O1",
        "-fno-pic",
        "-mcmodel=kernel",
        "-ffreestanding",
        "-c",
        (source_dir() / "tests/fixtures/kernel_src/fake_module.c").string(),
        "-o",
        ko().string()};
    if (function_sections()) cc.insert(cc.begin() + 1, "-ffunction-sections");
    CommandResult r = run_command(cc);
    ASSERT_EQ(r.exit_code, 0) << r.describe(cc);
    nm_ = nm_symbols(ko());
    sections_ = readelf_symbol_sections(ko());
    for (const auto& f : kModuleFunctions) {
      ASSERT_GT(nm_[f].size, 1u) << f;
      ASSERT_TRUE(sections_.count(f)) << f;
    }
    ASSERT_TRUE(nm_.count("mod_state"));
  }

  bool function_sections() const { return GetParam(); }
  // perf names a module by its path; the file name gives the module's name ("fake_mod").
  std::filesystem::path ko() const { return dir_ / "fake-mod.ko"; }
  std::string section_of(const std::string& f) const {
    return function_sections() ? ".text." + f : ".text";
  }

  std::shared_ptr<LoadedImage> open(const ModuleLayout& layout) const {
    auto elf = ElfBinary::open(ko());
    BinaryIdentity id;
    id.path = ko();
    ImageTranslator translator = ImageTranslator::kernel_module(*elf, layout);
    return std::make_shared<LoadedImage>(elf, id, ImageLoadOptions{}, std::move(translator));
  }

  // Samples halfway into each function at its section's runtime address resolve to nm's
  // section-relative address and readelf's section.
  void expect_functions_resolve(const char* mapping_name, const std::shared_ptr<LoadedImage>& image,
                                const std::map<std::string, uint64_t>& runtime_section) {
    ProcessTable processes;
    processes.on_mmap(kernel_mmap(mapping_name, kStart, kLength, 0));
    TargetImageSelector selector(image, false, nullptr);
    ImageResolver resolver(selector);
    for (const auto& f : kModuleFunctions) {
      const uint64_t in_section = nm_[f].addr + nm_[f].size / 2;
      const uint64_t runtime = runtime_section.at(section_of(f)) + in_section;
      const ResolvedAddress r = resolver.resolve(processes, kPid, runtime, CpuMode::Kernel);
      EXPECT_EQ(r.outcome, SampleOutcome::Mapped) << f;
      EXPECT_EQ(r.section, sections_[f]) << f;
      EXPECT_EQ(section_relative(*image, r), in_section) << f;
    }
  }

  // The module's image address less its section's (mapper/relocatable_layout.h).
  static uint64_t section_relative(const LoadedImage& image, const ResolvedAddress& r) {
    if (r.section >= image.elf()->sections().size()) return UINT64_MAX;
    return r.vaddr - image.elf()->sections()[r.section].addr;
  }

  // The sections in reverse order from the end of the module's memory, .text not at its start.
  ModuleLayout reversed_layout(std::map<std::string, uint64_t>& runtime) const {
    ModuleLayout layout;
    layout.start = kStart;
    uint64_t at = kStart + 0x7000;
    for (const auto& f : kModuleFunctions) {
      if (runtime.count(section_of(f))) continue;
      at -= 0x800;
      runtime[section_of(f)] = at;
      layout.sections.push_back({section_of(f), at});
    }
    return layout;
  }

  static constexpr uint64_t kStart = 0xffffffffc0a40000, kLength = 0x8000;
  TempDir dir_;
  std::map<std::string, NmSymbol> nm_;
  std::map<std::string, uint32_t> sections_;
};

TEST_P(KernelModuleResolver, SectionsPlacedAtTheirRuntimeBasesResolveToNmsAddresses) {
  std::map<std::string, uint64_t> runtime;
  const ModuleLayout layout = reversed_layout(runtime);
  expect_functions_resolve("/lib/modules/6.1.0/extra/fake-mod.ko", open(layout), runtime);
  expect_functions_resolve("[fake_mod]", open(layout), runtime);

  // Before the first placed section is no code of the module.
  ProcessTable processes;
  processes.on_mmap(kernel_mmap("[fake_mod]", kStart, kLength, 0));
  TargetImageSelector selector(open(layout), false, nullptr);
  ImageResolver resolver(selector);
  EXPECT_EQ(resolver.resolve(processes, kPid, kStart + 0x10, CpuMode::Kernel).outcome,
            SampleOutcome::NotExecutable);

  // Once the module's image is decided, resolving allocates nothing.
  const uint64_t sample = runtime.at(section_of("mod_write")) + nm_["mod_write"].addr + 1;
  ASSERT_EQ(resolver.resolve(processes, kPid, sample, CpuMode::Kernel).outcome,
            SampleOutcome::Mapped);
  AllocationCounter allocations;
  for (int i = 0; i < 1000; ++i) resolver.resolve(processes, kPid, sample, CpuMode::Kernel);
  allocations.stop();
  EXPECT_EQ(allocations.count(), 0u);
}

TEST_P(KernelModuleResolver, AModuleMappingSplitByALaterOneStillTranslates) {
  std::map<std::string, uint64_t> runtime;
  const ModuleLayout layout = reversed_layout(runtime);
  ProcessTable processes;
  processes.on_mmap(kernel_mmap("[fake_mod]", kStart, kLength, 0));
  // Another kernel mapping over the module's first pages leaves it the rest, from a later start.
  processes.on_mmap(kernel_mmap("[other_mod]", kStart, 0x2000, 0));
  const std::shared_ptr<LoadedImage> image = open(layout);
  TargetImageSelector selector(image, false, nullptr);
  ImageResolver resolver(selector);
  for (const auto& f : kModuleFunctions) {
    const uint64_t in_section = nm_[f].addr + nm_[f].size / 2;
    const ResolvedAddress r =
        resolver.resolve(processes, kPid, runtime.at(section_of(f)) + in_section, CpuMode::Kernel);
    EXPECT_EQ(r.outcome, SampleOutcome::Mapped) << f;
    EXPECT_EQ(section_relative(*image, r), in_section) << f;
    EXPECT_EQ(r.section, sections_[f]) << f;
  }
}

TEST_P(KernelModuleResolver, AKallsymsSymbolGivesItsSectionsRuntimeBase) {
  // simpleperf's way: the runtime address of a symbol, matched against the .ko's symbol of that
  // name, places the section holding it.
  auto elf = ElfBinary::open(ko());
  const uint64_t base = kStart + 0x1240;
  auto placed = module_section_of_symbol(*elf, "mod_write", base + nm_["mod_write"].addr);
  ASSERT_TRUE(placed);
  EXPECT_EQ(placed->name, section_of("mod_write"));
  EXPECT_EQ(placed->address, base);
  EXPECT_FALSE(module_section_of_symbol(*elf, "no_such_symbol", base));

  // Many symbols at once: each places its section; a name listed twice at run time places
  // nothing; symbols that disagree on their section's place leave it out.
  const uint64_t write_at = base + nm_["mod_write"].addr,
                 read_at = kStart + 0x3000 + nm_["mod_read"].addr;
  std::vector<ModuleLayout::Section> sections = module_sections_of_symbols(
      *elf, {{"mod_write", write_at}, {"mod_read", read_at}, {"no_such_symbol", base}});
  std::map<std::string, uint64_t> by_name;
  for (const auto& p : sections) by_name[p.name] = p.address;
  if (function_sections()) {
    EXPECT_EQ(by_name,
              (std::map<std::string, uint64_t>{{section_of("mod_write"), base},
                                               {section_of("mod_read"), kStart + 0x3000}}));
  } else {
    // One .text for both: they disagree.
    EXPECT_TRUE(by_name.empty()) << ::testing::PrintToString(by_name);
  }
  sections =
      module_sections_of_symbols(*elf, {{"mod_write", write_at}, {"mod_write", write_at + 0x100}});
  EXPECT_TRUE(sections.empty()) << "a name listed twice places nothing";
  if (!function_sections()) {
    const uint64_t exit_in_text = write_at - nm_["mod_write"].addr + nm_["mod_exit"].addr;
    sections =
        module_sections_of_symbols(*elf, {{"mod_write", write_at}, {"mod_exit", exit_in_text}});
    ASSERT_EQ(sections.size(), 1u) << "two symbols of .text that agree place it";
    EXPECT_EQ(sections[0].address, base);
  }
}

TEST_P(KernelModuleResolver, WithoutALayoutTextIsAtTheStartOfTheMapping) {
  auto image = LoadedImage::open_file(ko());
  ASSERT_EQ(image->kind(), ImageKind::KernelModule);
  // Every function in a section of its own leaves .text empty: nothing to place without a layout.
  if (function_sections()) {
    EXPECT_TRUE(image->translator().empty());
    return;
  }
  expect_functions_resolve("/lib/modules/6.1.0/extra/fake-mod.ko", image, {{".text", kStart}});
}

TEST_P(KernelModuleResolver, AnotherModulesMappingIsNotSelected) {
  ProcessTable processes;
  processes.on_mmap(kernel_mmap("/lib/modules/6.1.0/kernel/fs/fuse/fuse.ko", kStart, kLength, 0));
  TargetImageSelector selector(open({}), false, nullptr);
  ImageResolver resolver(selector);
  EXPECT_EQ(resolver.resolve(processes, kPid, kStart + 0x10, CpuMode::Kernel).outcome,
            SampleOutcome::Kernel);
}

// From a recording, the module's .text is at the start of its mapping (perf records no section
// layout); with every function in a section of its own nothing is placed, and convert says so.
TEST_P(KernelModuleResolver, ConvertWritesTheModulesProfileWhenItsCodeIsInText) {
  std::ostringstream script;
  script << "PERF_RECORD_MMAP -1/0: [0xffffffffc0a40000(0x8000) @ 0]: x [fake_mod]\n"
         << "     " << std::hex << kStart + nm_["mod_write"].addr + 1 << "\n";
  write_file(dir_ / "module.script", script.str());
  const std::vector<std::string> argv = {profcollect_exe().string(),
                                         "convert",
                                         "-q",
                                         "--perf-script",
                                         (dir_ / "module.script").string(),
                                         "-o",
                                         (dir_ / "module.fdata").string(),
                                         ko().string()};
  CommandResult r = run_command(argv);
  if (function_sections()) {
    EXPECT_EQ(r.exit_code, 1) << r.describe(argv);
    EXPECT_NE(r.err.find("without code in .text"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "module.fdata"));
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.describe(argv);
  EXPECT_NE(read_file(dir_ / "module.fdata").find("\n1 mod_write 1 1\n"), std::string::npos)
      << read_file(dir_ / "module.fdata");
}

INSTANTIATE_TEST_SUITE_P(FunctionSections, KernelModuleResolver, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "On" : "Off"; });

}  // namespace
}  // namespace profcollect::test
