// Arm SPE decoding judged by Linux perf (Debian 12's perf 6.1 decodes arm64 SPE data on any
// host): on the fixture perf.data (tests/fixtures/make_spe_fixtures.sh),
// - `perf report -D` prints every packet; its records (PC and level, operation, branch target,
//   events) must be profcollect's decoder's records of the same AUX bytes, in order;
// - `perf script --itrace=i1i` gives one sample per record: its IPs (and threads) must be the
//   samples profcollect's perf.data reader makes of the file;
// - `perf script --itrace=b` gives the mispredicted branches (ip = branch, addr = target).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collector/input/perf_data_reader.h"
#include "collector/aux/spe_packet_decoder.h"
#include "tests/integration/spe_fixtures.h"
#include "tests/integration/test_support.h"

namespace profcollect::test {
namespace {

// One record as `perf report -D` prints its packets.
struct DumpRecord {
  uint64_t pc = 0;  // bits [55:0], as perf prints it
  int el = -1;
  std::string operation;  // "B", "B COND", "B IND", "LD ...", "ST ...", "OTHER ..."
  std::optional<uint64_t> target;
  std::set<std::string> events;
};

struct Dump {
  std::vector<DumpRecord> records;
  std::set<std::string> packet_kinds;  // first word of each packet description
  size_t extended_headers = 0;         // packets whose first byte is 0b001000xx
  std::set<unsigned> headers;          // every packet's first byte
  size_t timestamp_ends = 0, end_ends = 0;
};

Dump parse_dump(const std::string& text) {
  static const std::regex line(R"(^\.\s+([0-9a-f]{8}):\s+((?:[0-9a-f]{2} )+)\s*(.*)$)");
  static const std::regex address(R"(^(PC|TGT) 0x([0-9a-f]+) el(\d) ns=\d$)");
  Dump d;
  DumpRecord cur;
  bool has_pc = false;
  for (const std::string& l : split_lines(text)) {
    std::smatch m;
    if (!std::regex_match(l, m, line)) continue;
    const std::string desc = m[3];
    if (desc.empty()) continue;
    const std::string first = desc.substr(0, desc.find(' '));
    d.packet_kinds.insert(first);
    const unsigned byte0 = std::stoul(m[2].str().substr(0, 2), nullptr, 16);
    if ((byte0 & 0xfc) == 0x20) ++d.extended_headers;
    d.headers.insert(byte0);
    std::smatch a;
    if (std::regex_match(desc, a, address)) {
      const uint64_t v = std::stoull(a[2], nullptr, 16);
      if (a[1] == "PC") {
        cur.pc = v;
        cur.el = std::stoi(a[3]);
        has_pc = true;
      } else {
        cur.target = v;
      }
    } else if (first == "EV") {
      std::istringstream words(desc.substr(2));
      std::string w;
      while (words >> w) cur.events.insert(w);
    } else if (first == "B" || first == "LD" || first == "ST" || first == "OTHER" ||
               first == "SVE-OTHER") {
      cur.operation = desc;
    } else if (first == "TS" || first == "END") {
      (first == "TS" ? d.timestamp_ends : d.end_ends)++;
      if (has_pc) d.records.push_back(cur);
      cur = DumpRecord{};
      has_pc = false;
    }
  }
  return d;
}

// The names perf gives the events packet's bits (the Arm ARM's event numbers).
std::set<std::string> event_names(uint32_t bits) {
  static const std::map<int, std::string> names = {
      {0, "EXCEPTION-GEN"},     {1, "RETIRED"},        {2, "L1D-ACCESS"},     {3, "L1D-REFILL"},
      {4, "TLB-ACCESS"},        {5, "TLB-REFILL"},     {6, "NOT-TAKEN"},      {7, "MISPRED"},
      {8, "LLC-ACCESS"},        {9, "LLC-REFILL"},     {10, "REMOTE-ACCESS"}, {11, "ALIGNMENT"},
      {17, "SVE-PARTIAL-PRED"}, {18, "SVE-EMPTY-PRED"}};
  std::set<std::string> out;
  for (const auto& [bit, name] : names) {
    if (bits & (1U << bit)) out.insert(name);
  }
  return out;
}

std::vector<spe::Record> decode_aux(const std::filesystem::path& path) {
  const std::string bytes = read_file(path);
  spe::SpePacketDecoder decoder(
      std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  std::vector<spe::Record> out;
  spe::Record r;
  while (decoder.next(r)) out.push_back(r);
  EXPECT_EQ(decoder.counts().bytes_skipped, 0u);
  EXPECT_EQ(decoder.counts().records_dropped, 0u);
  return out;
}

std::string perf_version() { return run_command({"perf", "version"}).out; }

class SpeDecodeVsPerf : public SpeFixtureTest {};

TEST_F(SpeDecodeVsPerf, RecordsMatchPerfReportDump) {
  const std::vector<std::string> argv = {"perf", "report", "-D", "-i",
                                         fixture("spe_loop.data").string()};
  const CommandResult dump = run_command(argv);
  ASSERT_EQ(dump.exit_code, 0) << dump.describe(argv);
  const Dump perf = parse_dump(dump.out);
  std::printf("judge: %s", perf_version().c_str());

  // The fixture covers every packet kind, both header forms and both record ends.
  for (const char* kind : {"PC", "TGT", "VA", "PA", "LAT", "EV", "B", "LD", "ST", "OTHER",
                           "CONTEXT", "DATA-SOURCE", "TS", "END", "PAD"}) {
    EXPECT_TRUE(perf.packet_kinds.count(kind)) << "perf printed no " << kind << " packet";
  }
  EXPECT_GT(perf.extended_headers, 100u);
  // EVENTS and DATA SOURCE with payloads of 1, 2, 4 and 8 bytes; CONTEXT of either register.
  for (unsigned header : {0x42u, 0x52u, 0x62u, 0x72u, 0x43u, 0x53u, 0x63u, 0x73u, 0x64u, 0x65u}) {
    EXPECT_TRUE(perf.headers.count(header))
        << "perf printed no packet with header " << std::hex << header;
  }
  EXPECT_GT(perf.end_ends, 100u);
  EXPECT_GT(perf.timestamp_ends, 1000u);

  const std::vector<spe::Record> ours = decode_aux(fixture("spe_loop.aux"));
  ASSERT_EQ(ours.size(), perf.records.size());
  ASSERT_EQ(ours.size(), 2000u);
  size_t kernel = 0, taken = 0, not_taken = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    const spe::Record& o = ours[i];
    const DumpRecord& p = perf.records[i];
    SCOPED_TRACE("record " + std::to_string(i));
    EXPECT_EQ(o.pc & ((uint64_t{1} << 56) - 1), p.pc);
    EXPECT_EQ(o.exception_level, p.el);
    if (p.el == 1) {
      ++kernel;
      EXPECT_EQ(o.pc >> 56, 0xffu) << "an EL1 PC is a kernel address";
    }
    EXPECT_EQ(event_names(o.events), p.events);
    const std::string op_word = p.operation.substr(0, p.operation.find(' '));
    switch (o.operation) {
      case spe::OperationClass::kBranch:
        EXPECT_EQ(op_word, "B");
        EXPECT_EQ((o.operation_subclass & spe::kBranchConditional) != 0,
                  p.operation.find("COND") != std::string::npos);
        EXPECT_EQ(spe::is_indirect_branch(o.operation_subclass),
                  p.operation.find("IND") != std::string::npos);
        break;
      case spe::OperationClass::kLoadStore:
        EXPECT_TRUE(op_word == "LD" || op_word == "ST");
        EXPECT_EQ(op_word == "ST", (o.operation_subclass & 1) != 0);
        break;
      case spe::OperationClass::kOther:
        EXPECT_EQ(op_word, "OTHER");
        break;
      default:
        ADD_FAILURE() << "no operation";
    }
    ASSERT_EQ(o.has_branch_target, p.target.has_value());
    if (p.target) {
      EXPECT_EQ(o.branch_target & ((uint64_t{1} << 56) - 1), *p.target);
    }
    if (o.is_branch()) {
      // taken = a branch without perf's NOT-TAKEN event.
      EXPECT_EQ(o.taken(), !p.events.count("NOT-TAKEN"));
      (o.taken() ? taken : not_taken)++;
    }
    EXPECT_EQ(o.mispredicted(), p.events.count("MISPRED") == 1);
  }
  EXPECT_GT(kernel, 0u);
  EXPECT_GT(taken, 0u);
  EXPECT_GT(not_taken, 0u);
}

// Our perf.data reader's samples of the file against perf's samples of the same file.
TEST_F(SpeDecodeVsPerf, ReaderSamplesMatchPerfScriptInstructionSamples) {
  const std::vector<std::string> argv = {
      "perf",         "script", "-i",        fixture("spe_loop.data").string(),
      "--itrace=i1i", "-F",     "pid,tid,ip"};
  const CommandResult script = run_command(argv);
  ASSERT_EQ(script.exit_code, 0) << script.describe(argv);
  std::multiset<std::string> perf_samples;
  for (const std::string& l : split_lines(script.out)) {
    std::istringstream in(l);
    std::string thread, ip;
    if (in >> thread >> ip) perf_samples.insert(thread + " " + ip);
  }
  ASSERT_EQ(perf_samples.size(), 2000u) << script.out.substr(0, 500);

  std::unique_ptr<RecordSource> source = open_perf_data(fixture("spe_loop.data").string());
  std::multiset<std::string> our_samples;
  std::multiset<std::pair<uint64_t, uint64_t>> our_edges;
  Record rec;
  while (source->next(rec)) {
    const auto* s = std::get_if<SampleRecord>(&rec);
    if (!s) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%u/%u %llx", s->pid, s->tid,
                  static_cast<unsigned long long>(s->ip));
    our_samples.insert(buf);
    EXPECT_TRUE(s->has_branch_stack);
    EXPECT_LE(s->branches.size(), 1u);
    for (const BranchEntry& e : s->branches) our_edges.emplace(e.from, e.to);
  }
  EXPECT_EQ(our_samples, perf_samples);
  EXPECT_TRUE(source->session().arm_spe);
  EXPECT_EQ(source->session().spe.records, 2000u);
  EXPECT_EQ(source->session().spe.bytes_skipped, 0u);
  EXPECT_EQ(source->session().attrs.at(0).name, "arm_spe_0//");

  // Each taken branch record (perf's dump: a B operation without NOT-TAKEN) is one edge.
  const CommandResult dump =
      run_command({"perf", "report", "-D", "-i", fixture("spe_loop.data").string()});
  ASSERT_EQ(dump.exit_code, 0);
  const Dump perf = parse_dump(dump.out);
  std::multiset<std::pair<uint64_t, uint64_t>> perf_edges;
  for (const DumpRecord& r : perf.records) {
    if (r.operation.starts_with("B") && r.target && !r.events.count("NOT-TAKEN")) {
      const uint64_t top = r.el == 1 ? uint64_t{0xff} << 56 : 0;
      perf_edges.emplace(r.pc | top, *r.target | top);
    }
  }
  EXPECT_GT(perf_edges.size(), 100u);
  EXPECT_EQ(our_edges, perf_edges);
  EXPECT_EQ(source->session().spe.taken_branches, perf_edges.size());
}

TEST_F(SpeDecodeVsPerf, MispredictedBranchesMatchPerfScriptBranchSamples) {
  const std::vector<std::string> argv = {
      "perf", "script", "-i", fixture("spe_loop.data").string(), "--itrace=b", "-F", "ip,addr"};
  const CommandResult script = run_command(argv);
  ASSERT_EQ(script.exit_code, 0) << script.describe(argv);
  std::multiset<std::pair<uint64_t, uint64_t>> perf_branches;  // (ip, addr)
  for (const std::string& l : split_lines(script.out)) {
    std::istringstream in(l);
    std::string addr, ip;  // perf script prints addr before ip
    if (in >> addr >> ip)
      perf_branches.emplace(std::stoull(ip, nullptr, 16), std::stoull(addr, nullptr, 16));
  }
  std::multiset<std::pair<uint64_t, uint64_t>> ours;
  for (const spe::Record& r : decode_aux(fixture("spe_loop.aux"))) {
    if (r.mispredicted()) ours.emplace(r.pc, r.branch_target);
  }
  EXPECT_GT(ours.size(), 50u);
  EXPECT_EQ(ours, perf_branches);
}

}  // namespace
}  // namespace profcollect::test
