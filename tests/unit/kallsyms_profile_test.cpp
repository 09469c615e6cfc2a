// The kallsyms route's cumulative profile (output/kallsyms_profile.h): two runs add up offset
// by offset and function by function, the files written read back to the same counts, and a
// directory whose files disagree or are damaged is refused with the file and the reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "output/kallsyms_profile.h"

namespace profcollect {
namespace {

std::string file_of(const std::vector<std::pair<std::string, std::string>>& files,
                    const std::string& name) {
  for (const auto& [n, content] : files) {
    if (n == name) return content;
  }
  ADD_FAILURE() << name << " not written";
  return {};
}

// Two runs over the symbols: kernel image f at 0x1000, g at 0x1100; module m's h at 0x9000.
KallsymsProfile run(uint64_t f_samples, uint64_t g_samples, uint64_t h_samples,
                    uint64_t unattributed, uint64_t when) {
  const uint64_t text = 0xffffffff81000000;
  std::unordered_map<uint64_t, uint64_t> addresses;
  if (f_samples) addresses[text + 0x1004] = f_samples;
  if (g_samples) addresses[text + 0x1100] = g_samples;
  if (h_samples) addresses[0xffffffffc0009010] = h_samples;
  if (unattributed) addresses[text - 0x10] = unattributed;
  const std::vector<KernelSymbol> symbols = {{text, "_text", ""},
                                             {text + 0x1000, "f", ""},
                                             {text + 0x1100, "g", ""},
                                             {0xffffffffc0009000, "h", "m"}};
  KallsymsProfile p;
  p.functions = summarize_kernel_functions(addresses, symbols, text + 0x2000,
                                           {{"m", 0xffffffffc0009000, 0xffffffffc000a000}});
  if (f_samples) p.text_offsets.add(0x1004, f_samples);
  if (g_samples) p.text_offsets.add(0x1100, g_samples);
  p.first_sample_ns = p.last_sample_ns = when;
  return p;
}

TEST(KallsymsProfile, TwoRunsAddUpAndTheFilesReadBackToTheSameCounts) {
  KallsymsProfile total = run(30, 10, 5, 2, 100);
  add_kallsyms_profile(total, run(0, 20, 7, 1, 200));
  EXPECT_EQ(total.text_offsets.total(), 60u);
  EXPECT_EQ(total.text_offsets.counts().at(0x1100), 30u);
  EXPECT_EQ(total.functions.samples, 75u);
  EXPECT_EQ(total.functions.unattributed, 3u);
  ASSERT_EQ(total.functions.functions.size(), 3u);
  EXPECT_EQ(total.functions.functions[0].name, "f");  // 30 samples, before g's 30 by name
  EXPECT_EQ(total.functions.functions[1].name, "g");
  EXPECT_EQ(total.functions.functions[2].name, "h");
  EXPECT_EQ(total.functions.functions[2].samples, 12u);
  EXPECT_DOUBLE_EQ(total.functions.functions[0].share, 30.0 / 75.0);
  EXPECT_EQ(total.first_sample_ns, 100u);
  EXPECT_EQ(total.last_sample_ns, 200u);

  const auto files = render_kallsyms_profile(total, {"abcd", "cpu-clock:k"});
  EXPECT_EQ(file_of(files, "functions.txt"),
            "30 40.00% f kernel\n30 40.00% g kernel\n12 16.00% h m\n");
  EXPECT_EQ(file_of(files, "samples.ip"), "1004 30\n1100 30\n");
  EXPECT_EQ(file_of(files, "autofdo.unsym"), "2\n1004-1004:30\n1100-1100:30\n0\n");
  const nlohmann::json meta = nlohmann::json::parse(file_of(files, "meta.json"));
  EXPECT_EQ(meta["samples"], 60);
  EXPECT_EQ(meta["kernel_samples"], 75);
  EXPECT_EQ(meta["modules"]["m"], 12);

  std::string error;
  const auto back =
      parse_kallsyms_profile(file_of(files, "samples.ip"), file_of(files, "functions.txt"),
                             file_of(files, "meta.json"), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->text_offsets.counts(), total.text_offsets.counts());
  EXPECT_EQ(back->functions.samples, 75u);
  EXPECT_EQ(back->functions.unattributed, 3u);
  EXPECT_EQ(back->first_sample_ns, 100u);
  // A third run adds to what was read back as to what was in memory.
  KallsymsProfile again = *back;
  add_kallsyms_profile(again, run(1, 0, 0, 0, 300));
  EXPECT_EQ(render_kernel_functions(again.functions),
            "31 40.79% f kernel\n30 39.47% g kernel\n12 15.79% h m\n");
}

TEST(KallsymsProfile, DamagedOrDisagreeingFilesAreRefusedNamingTheFile) {
  const auto files = render_kallsyms_profile(run(3, 4, 0, 1, 5), {"abcd", "cpu-clock:k"});
  const std::string ips = file_of(files, "samples.ip"), functions = file_of(files, "functions.txt"),
                    meta = file_of(files, "meta.json");
  std::string error;
  EXPECT_FALSE(parse_kallsyms_profile("1004 x\n", functions, meta, &error));
  EXPECT_EQ(error, "samples.ip: line 1: expected '<hex address> <count>'");
  EXPECT_FALSE(parse_kallsyms_profile(ips, "3 1% f\n", meta, &error));
  EXPECT_EQ(error, "functions.txt: line 1: expected '<count> <share>% <name> <module>'");
  EXPECT_FALSE(parse_kallsyms_profile(ips, functions, "[]", &error));
  EXPECT_EQ(error, "meta.json: not a JSON object");
  EXPECT_FALSE(parse_kallsyms_profile("1004 3\n", functions, meta, &error));
  EXPECT_EQ(error, "samples.ip does not hold meta.json's samples");
  EXPECT_FALSE(parse_kallsyms_profile(ips, "3 37.50% f kernel\n", meta, &error));
  EXPECT_EQ(error,
            "functions.txt and meta.json's unattributed do not add up to its kernel_samples");
  nlohmann::json negative = nlohmann::json::parse(meta);
  negative["unattributed"] = -1;
  EXPECT_FALSE(parse_kallsyms_profile(ips, functions, negative.dump(), &error));
  EXPECT_NE(error.find("must be counts"), std::string::npos) << error;
}

}  // namespace
}  // namespace profcollect
