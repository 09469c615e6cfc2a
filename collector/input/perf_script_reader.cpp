#include "collector/input/perf_script_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace profcollect {

namespace {

constexpr uint64_t kSampleIp = 1u << 0;            // PERF_SAMPLE_IP
constexpr uint64_t kSampleBranchStack = 1u << 11;  // PERF_SAMPLE_BRANCH_STACK

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  s = trim_left(s);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The next whitespace-separated token, removed from `s`.
std::string_view next_token(std::string_view& s) {
  s = trim_left(s);
  size_t end = 0;
  while (end < s.size() && s[end] != ' ' && s[end] != '\t') ++end;
  std::string_view token = s.substr(0, end);
  s.remove_prefix(end);
  return token;
}

template <typename T>
bool parse_number(std::string_view text, T& value, int base) {
  if (base == 16 && (text.starts_with("0x") || text.starts_with("0X"))) text.remove_prefix(2);
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  return ec == std::errc() && end == text.data() + text.size();
}

// "pid/tid", both decimal (pid may be -1).
bool parse_pid_tid(std::string_view text, uint32_t& pid, uint32_t& tid) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return false;
  int64_t p = 0, t = 0;
  if (!parse_number(text.substr(0, slash), p, 10) || !parse_number(text.substr(slash + 1), t, 10)) {
    return false;
  }
  pid = static_cast<uint32_t>(p);
  tid = static_cast<uint32_t>(t);
  return true;
}

// perf's names of the branch types (PERF_BR_*) and speculation states (PERF_BR_SPEC_*), as
// `perf script -F brstack` prints them; their index is the value kept in BranchEntry::flags.
constexpr std::string_view kBranchTypes[] = {
    "N/A",    "COND",      "UNCOND",   "IND",  "CALL", "IND_CALL", "RET",   "SYSCALL",
    "SYSRET", "COND_CALL", "COND_RET", "ERET", "IRQ",  "SERROR",   "NO_TX", "EXTEND_ABI"};
constexpr std::string_view kBranchSpecs[] = {"N/A", "SPEC_WRONG_PATH", "NON_SPEC_CORRECT_PATH",
                                             "SPEC_CORRECT_PATH"};

template <size_t N>
int name_index(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

// One brstack entry: 0xFROM/0xTO/M|P|-/X|-/A|-/cycles[/type[/spec]].
bool parse_branch(std::string_view token, BranchEntry& entry) {
  std::string_view fields[8];
  size_t n = 0;
  while (n < 8) {
    const size_t slash = token.find('/');
    fields[n++] = token.substr(0, slash);
    if (slash == std::string_view::npos) break;
    token.remove_prefix(slash + 1);
  }
  if (n < 2 || !fields[0].starts_with("0x") || !fields[1].starts_with("0x")) return false;
  if (!parse_number(fields[0], entry.from, 16) || !parse_number(fields[1], entry.to, 16))
    return false;
  entry.flags = 0;
  if (n > 2 && fields[2] == "M") entry.flags |= 1;
  if (n > 2 && fields[2] == "P") entry.flags |= 2;
  if (n > 3 && fields[3] == "X") entry.flags |= 4;
  if (n > 4 && fields[4] == "A") entry.flags |= 8;
  uint16_t cycles = 0;
  if (n > 5 && parse_number(fields[5], cycles, 10)) entry.flags |= uint64_t{cycles} << 4;
  if (n > 6) {
    const int type = name_index(kBranchTypes, fields[6]);
    if (type > 0) entry.flags |= uint64_t(type) << 20;
  }
  if (n > 7) {
    const int spec = name_index(kBranchSpecs, fields[7]);
    if (spec > 0) entry.flags |= uint64_t(spec) << 24;
  }
  return true;
}

CpuMode mode_of(uint64_t address) { return (address >> 63) ? CpuMode::Kernel : CpuMode::User; }

}  // namespace

std::unique_ptr<PerfScriptReader> PerfScriptReader::open(const std::string& path) {
  std::unique_ptr<PerfScriptReader> reader(new PerfScriptReader());
  reader->path_ = path;
  if (path == "-") {
    reader->file_ = stdin;
  } else {
    FILE* file = std::fopen(path.c_str(), "re");
    if (file == nullptr) throw OpenError(path, std::strerror(errno));
    struct stat st {};
    if (fstat(fileno(file), &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        std::fclose(file);
        throw OpenError(path, std::strerror(EISDIR));
      }
      if (S_ISREG(st.st_mode)) reader->bytes_total_ = static_cast<uint64_t>(st.st_size);
    }
    reader->file_ = file;
    reader->owns_file_ = true;
  }
  EventAttr attr;
  attr.name = "perf-script";
  attr.sample_type = kSampleIp;
  reader->session_.attrs.push_back(attr);
  return reader;
}

PerfScriptReader::~PerfScriptReader() {
  if (owns_file_ && file_ != nullptr) std::fclose(static_cast<FILE*>(file_));
  std::free(line_);
}

bool PerfScriptReader::next(Record& out) {
  for (;;) {
    const ssize_t n = getline(&line_, &line_capacity_, static_cast<FILE*>(file_));
    if (n < 0) {
      if (std::ferror(static_cast<FILE*>(file_))) {
        throw SourceError(path_, bytes_read_, std::strerror(errno));
      }
      return false;
    }
    bytes_read_ += static_cast<uint64_t>(n);
    ++stats_.lines;
    const std::string_view line = trim(std::string_view(line_, static_cast<size_t>(n)));
    if (line.empty()) continue;
    if (line.find("PERF_RECORD_MMAP") != std::string_view::npos) {
      if (parse_mmap(line, out)) return true;
    } else if (parse_sample(line, out)) {
      return true;
    }
    ++stats_.skipped_lines;
  }
}

bool PerfScriptReader::parse_mmap(std::string_view line, Record& out) {
  // PERF_RECORD_MMAP2 pid/tid: [0xSTART(0xLEN) @ PGOFF MAJ:MIN INO GEN]: rwxp PATH
  // PERF_RECORD_MMAP2 pid/tid: [0xSTART(0xLEN) @ PGOFF <BUILDID>]: rwxp PATH
  // PERF_RECORD_MMAP pid/tid: [0xSTART(0xLEN) @ PGOFF]: x|r PATH
  const size_t at = line.find("PERF_RECORD_MMAP");
  std::string_view rest = line.substr(at);
  MmapRecord record;
  record.is_mmap2 = rest.starts_with("PERF_RECORD_MMAP2");
  next_token(rest);
  std::string_view ids = next_token(rest);
  if (!ids.ends_with(':') ||
      !parse_pid_tid(ids.substr(0, ids.size() - 1), record.pid, record.tid)) {
    return false;
  }
  rest = trim_left(rest);
  const size_t close = rest.find("]: ");
  if (!rest.starts_with('[') || close == std::string_view::npos) return false;
  std::string_view inside = rest.substr(1, close - 1);
  std::string_view after = rest.substr(close + 3);
  const size_t paren = inside.find('(');
  const size_t paren_end = inside.find(')');
  if (paren == std::string_view::npos || paren_end == std::string_view::npos || paren_end < paren) {
    return false;
  }
  if (!parse_number(inside.substr(0, paren), record.start, 16) ||
      !parse_number(inside.substr(paren + 1, paren_end - paren - 1), record.len, 16)) {
    return false;
  }
  std::string_view tail = inside.substr(paren_end + 1);
  if (next_token(tail) != "@") return false;
  if (!parse_number(next_token(tail), record.pgoff, 16)) return false;
  if (record.is_mmap2) {
    std::string_view device = next_token(tail);
    if (device.starts_with('<') && device.ends_with('>')) {
      if (auto id = BuildId::from_hex(device.substr(1, device.size() - 2))) record.build_id = *id;
    } else {
      const size_t colon = device.find(':');
      if (colon != std::string_view::npos) {
        parse_number(device.substr(0, colon), record.maj, 16);
        parse_number(device.substr(colon + 1), record.min, 16);
      }
      parse_number(next_token(tail), record.ino, 10);
      parse_number(next_token(tail), record.ino_generation, 10);
    }
  }
  std::string_view prot = next_token(after);
  record.filename = trim(after);
  if (record.is_mmap2) {
    record.executable = prot.size() >= 3 && prot[2] == 'x';
    record.prot = (prot.size() > 0 && prot[0] == 'r' ? 1u : 0u) |
                  (prot.size() > 1 && prot[1] == 'w' ? 2u : 0u) | (record.executable ? 4u : 0u);
  } else {
    record.executable = prot == "x";
  }
  record.cpumode = record.pid == kNoPid ? CpuMode::Kernel : CpuMode::User;
  if (record.cpumode == CpuMode::User && record.executable) current_pid_ = record.pid;
  ++stats_.mmaps;
  out = record;
  return true;
}

uint32_t PerfScriptReader::attr_named(std::string_view name) {
  for (size_t i = 0; i < session_.attrs.size(); ++i) {
    if (session_.attrs[i].name == name) return static_cast<uint32_t>(i);
  }
  // The first name replaces the placeholder attr, unless unnamed samples came before it.
  if (!named_ && stats_.samples == 0) {
    named_ = true;
    session_.attrs[0].name = std::string(name);
    return 0;
  }
  named_ = true;
  EventAttr attr;
  attr.name = std::string(name);
  attr.sample_type = kSampleIp;
  session_.attrs.push_back(attr);
  return static_cast<uint32_t>(session_.attrs.size() - 1);
}

bool PerfScriptReader::parse_sample(std::string_view line, Record& out) {
  std::string_view rest = line;
  std::string_view token = next_token(rest);
  SampleRecord sample;
  sample.pid = current_pid_;
  sample.tid = current_pid_;
  if (token.find('/') != std::string_view::npos && !token.starts_with("0x")) {
    if (!parse_pid_tid(token, sample.pid, sample.tid)) return false;
    token = next_token(rest);
  }
  if (token.ends_with(':')) {  // an event name: "cycles:u:"
    sample.attr_index = attr_named(token.substr(0, token.size() - 1));
    token = next_token(rest);
  }
  if (!parse_number(token, sample.ip, 16)) return false;
  sample.cpumode = mode_of(sample.ip);
  branches_.clear();
  for (std::string_view entry = next_token(rest); !entry.empty(); entry = next_token(rest)) {
    BranchEntry branch{};
    if (!parse_branch(entry, branch)) {
      ++stats_.bad_branch_entries;
      break;
    }
    branches_.push_back(branch);
  }
  if (!branches_.empty()) {
    sample.has_branch_stack = true;
    sample.branches = branches_;
    session_.attrs[sample.attr_index].sample_type |= kSampleBranchStack;
  }
  ++stats_.samples;
  out = sample;
  return true;
}

}  // namespace profcollect
