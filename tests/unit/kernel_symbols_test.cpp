// The running kernel's symbols, modules and notes as the kernel lays them out: /proc/kallsyms
// lines (kernel/kallsyms.c's s_show: "%px %c %s\t[%s]"), /proc/modules lines (kernel/module/
// procfs.c: name, size, refcount, deps, state, address), and an ELF note list (Elf64_Nhdr, name
// and descriptor padded to four bytes); and the function summary made from them.
#include <gtest/gtest.h>

#include <elf.h>

#include <cstring>

#include "collector/kernel/kallsyms.h"
#include "collector/kernel/kernel_notes.h"
#include "output/kernel_function_summary.h"

namespace profcollect {
namespace {

const char* kKallsyms =
    "ffffffff81000000 T _text\n"
    "ffffffff81000000 T _stext\n"
    "ffffffff81000100 t kernel_alpha\n"
    "ffffffff81000200 T kernel_beta\n"
    "ffffffff81002000 D some_data\n"
    "ffffffff81001000 T _etext\n"
    "ffffffffa0000000 t mod_open\t[fake_mod]\n"
    "ffffffffa0000080 t mod_read\t[fake_mod]\n"
    "ffffffff81000300 W weak_fn\n";

TEST(Kallsyms, TextSymbolsSortedWithTheirModuleAndTheReferenceSymbols) {
  const KallsymsTable t = parse_kallsyms(kKallsyms);
  ASSERT_TRUE(t.text && t.stext && t.etext);
  EXPECT_EQ(*t.text, 0xffffffff81000000u);
  EXPECT_EQ(*t.etext, 0xffffffff81001000u);
  EXPECT_FALSE(t.hidden);
  std::vector<std::string> names;
  for (const auto& s : t.functions) names.push_back(s.name + "/" + s.module);
  EXPECT_EQ(names, (std::vector<std::string>{"_text/", "_stext/", "kernel_alpha/", "kernel_beta/",
                                             "weak_fn/", "_etext/", "mod_open/fake_mod",
                                             "mod_read/fake_mod"}));
}

TEST(Kallsyms, ZeroedAddressesAreHidden) {
  EXPECT_TRUE(parse_kallsyms("0000000000000000 T _text\n0000000000000000 t f\n").hidden);
  EXPECT_TRUE(parse_kallsyms("garbage\n\nzz T x\n").functions.empty());
}

TEST(ProcModules, NameSizeAndAddress) {
  const auto m = parse_proc_modules(
      "fuse 176128 3 - Live 0xffffffffc0a5d000\n"
      "nf_tables 319488 0 - Live 0xffffffffc09f0000 (E)\n"
      "short line\n");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].name, "fuse");
  EXPECT_EQ(m[0].size, 176128u);
  EXPECT_EQ(m[0].address, 0xffffffffc0a5d000u);
  EXPECT_EQ(m[1].address, 0xffffffffc09f0000u);
}

void append_note(std::string& out, const std::string& name_with_nul, uint32_t type,
                 const std::string& desc) {
  auto word = [&](uint32_t w) { out.append(reinterpret_cast<const char*>(&w), 4); };
  word(static_cast<uint32_t>(name_with_nul.size()));
  word(static_cast<uint32_t>(desc.size()));
  word(type);
  out += name_with_nul;
  out.append((4 - name_with_nul.size() % 4) % 4, '\0');
  out += desc;
  out.append((4 - desc.size() % 4) % 4, '\0');
}

TEST(KernelNotes, BuildIdAfterOtherNotes) {
  std::string notes;
  append_note(notes, std::string("Xen\0", 4), 18, std::string("\x00\x00\x00\x01", 4));
  append_note(notes, std::string("Linux\0", 6), 6, std::string("6.1\0", 4));
  const std::string id(
      "\xa3\xe4\xcd\x60\xa8\xec\x14\xf0\x2a\xa4\x1b\x41\xd5\xb5\x84\x6d\x3d\x9f\x1d\xd8", 20);
  append_note(notes, std::string("GNU\0", 4), NT_GNU_BUILD_ID, id);
  const auto got = build_id_from_notes(notes);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->to_hex(), "a3e4cd60a8ec14f02aa41b41d5b5846d3d9f1dd8");
  // Cut anywhere inside the build-id note: no build-id, never a read past the end.
  for (size_t cut = notes.size() - 1; cut > notes.size() - 32; --cut) {
    EXPECT_FALSE(build_id_from_notes(std::string_view(notes).substr(0, cut))) << cut;
  }
  // A size that claims more than there is.
  std::string bad;
  append_note(bad, std::string("GNU\0", 4), NT_GNU_BUILD_ID, id);
  const uint32_t huge = 0xfffffff0;
  std::memcpy(bad.data() + 4, &huge, 4);
  EXPECT_FALSE(build_id_from_notes(bad));
}

TEST(KernelFunctionSummary, AddressesGoToTheSymbolBelowWithinTheirImage) {
  const KallsymsTable t = parse_kallsyms(kKallsyms);
  std::unordered_map<uint64_t, uint64_t> counts = {
      {0xffffffff81000150, 6},  // kernel_alpha
      {0xffffffff81000210, 3},  // kernel_beta
      {0xffffffff81000200, 1},  // kernel_beta, its first byte
      {0xffffffffa0000090, 2},  // mod_read
      {0xffffffffa0010000, 4},  // past fake_mod's memory: no symbol of its own
      {0xffffffff80000000, 1},  // below every symbol
  };
  const std::vector<ModuleRange> modules = {{"fake_mod", 0xffffffffa0000000, 0xffffffffa0001000}};
  const KernelFunctionSummary s =
      summarize_kernel_functions(counts, t.functions, *t.etext, modules);
  EXPECT_EQ(s.samples, 17u);
  EXPECT_EQ(s.unattributed, 5u);
  ASSERT_EQ(s.functions.size(), 3u);
  EXPECT_EQ(s.functions[0].name, "kernel_alpha");
  EXPECT_EQ(s.functions[0].samples, 6u);
  EXPECT_DOUBLE_EQ(s.functions[0].share, 6.0 / 17);
  EXPECT_EQ(s.functions[1].name, "kernel_beta");
  EXPECT_EQ(s.functions[1].samples, 4u);
  EXPECT_EQ(s.functions[2].name, "mod_read");
  EXPECT_EQ(s.functions[2].module, "fake_mod");
  ASSERT_EQ(s.modules.size(), 1u);
  EXPECT_EQ(s.modules[0].second, 2u);
  EXPECT_EQ(render_kernel_functions(s).substr(0, 32), "6 35.29% kernel_alpha kernel\n4 2");
}

}  // namespace
}  // namespace profcollect
