// The kernel's own mappings made from kallsyms and /proc/modules, as perf synthesizes them
// (tools/perf/util/machine.c: "[kernel.kallsyms]_text" with pgoff the runtime _text, a module
// "[NAME]" over its memory), fed to the process table the recording path uses: a kernel-mode
// address lands in the kernel image or in its module, named as perf script names them.
#include "collector/kernel/kernel_layout_records.h"

#include <gtest/gtest.h>

#include "collector/host/setting_error.h"
#include "mapper/image_kind.h"
#include "mapper/process_table.h"

namespace profcollect {
namespace {

TEST(KernelLayoutRecords, KernelImageAndModulesAreMappedAsPerfSynthesizesThem) {
  const KallsymsTable kallsyms = parse_kallsyms(
      "ffffffff8b000000 T _text\nffffffff8b000000 T _stext\nffffffff8c200000 T _etext\n"
      "ffffffff8b000100 T start_kernel\n");
  const std::vector<LoadedModule> modules = {{"fuse", 0xffffffffc0a5d000, 0x2b000},
                                             {"hidden", 0, 0x1000}};
  const KernelLayoutRecords layout(kallsyms, modules);
  EXPECT_EQ(layout.text(), 0xffffffff8b000000u);
  ASSERT_EQ(layout.records().size(), 2u);  // a module whose address is hidden is left out
  const auto& k = std::get<MmapRecord>(layout.records()[0]);
  EXPECT_EQ(k.filename, "[kernel.kallsyms]_text");
  EXPECT_EQ(k.pid, ProcessTable::kKernelPid);
  EXPECT_EQ(k.start, 0xffffffff8b000000u);
  EXPECT_EQ(k.pgoff, 0xffffffff8b000000u);
  EXPECT_EQ(k.len, 0x1200000u);

  ProcessTable table;
  for (const Record& r : layout.records()) table.update(r);
  const Mapping* in_kernel = table.find(77, 0xffffffff8b000150, CpuMode::Kernel);
  ASSERT_TRUE(in_kernel);
  EXPECT_EQ(classify_image(table.dso(in_kernel->dso)), ImageKind::Kernel);
  EXPECT_EQ(dso_display_name(table.dso(in_kernel->dso)), "[kernel.kallsyms]");
  const Mapping* in_module = table.find(77, 0xffffffffc0a5d000 + 0x100, CpuMode::Kernel);
  ASSERT_TRUE(in_module);
  EXPECT_EQ(classify_image(table.dso(in_module->dso)), ImageKind::KernelModule);
  EXPECT_EQ(module_name(table.dso(in_module->dso).path), "fuse");
  EXPECT_FALSE(table.find(77, 0xffffffffc0a5d000 + 0x2b000, CpuMode::Kernel));
}

TEST(KernelLayoutRecords, HiddenAddressesAndNoReferenceSymbolAreRefused) {
  EXPECT_THROW(
      KernelLayoutRecords(parse_kallsyms("0000000000000000 T _text\n0000000000000000 T f\n"), {}),
      SettingError);
  EXPECT_THROW(KernelLayoutRecords(parse_kallsyms("ffffffff81000100 T f\n"), {}), SettingError);
  // _stext alone is taken, as perf falls back to it.
  const KernelLayoutRecords stext(parse_kallsyms("ffffffff81000000 T _stext\n"), {});
  EXPECT_EQ(std::get<MmapRecord>(stext.records()[0]).filename, "[kernel.kallsyms]_stext");
}

}  // namespace
}  // namespace profcollect
