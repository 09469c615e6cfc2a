#include "collector/host/proc_maps.h"

#include <sys/mman.h>

#include <charconv>

#include "collector/host/proc_files.h"
#include "collector/host/proc_tasks.h"

namespace profcollect {

namespace {

// Reads one field up to `stop` (or the end) and advances past it.
std::string_view take_until(std::string_view& s, char stop) {
  const size_t at = s.find(stop);
  std::string_view field = s.substr(0, at);
  s = at == std::string_view::npos ? std::string_view{} : s.substr(at + 1);
  return field;
}

template <typename T>
bool parse_number(std::string_view text, T& out, int base) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

void skip_spaces(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
}

// The kernel escapes '\n' in path names as "\012" (seq_file_path); turn it back so the name
// equals the one in the kernel's MMAP2 records. Other backslashes are the name's own.
std::string unescape_newlines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 4, "\\012") == 0) {
      out += '\n';
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool ProcMapsEntry::executable() const { return (prot & PROT_EXEC) != 0; }

std::optional<ProcMapsEntry> parse_proc_maps_line(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  ProcMapsEntry e;
  std::string_view s = line;
  if (!parse_number(take_until(s, '-'), e.start, 16)) return std::nullopt;
  if (!parse_number(take_until(s, ' '), e.end, 16) || e.end < e.start) return std::nullopt;

  const std::string_view perms = take_until(s, ' ');
  if (perms.size() != 4) return std::nullopt;
  if (perms[0] == 'r') e.prot |= PROT_READ;
  if (perms[1] == 'w') e.prot |= PROT_WRITE;
  if (perms[2] == 'x') e.prot |= PROT_EXEC;
  if (perms[3] == 's')
    e.flags = MAP_SHARED;
  else if (perms[3] == 'p')
    e.flags = MAP_PRIVATE;
  else
    return std::nullopt;

  if (!parse_number(take_until(s, ' '), e.pgoff, 16)) return std::nullopt;
  std::string_view dev = take_until(s, ' ');
  if (!parse_number(take_until(dev, ':'), e.maj, 16) || !parse_number(dev, e.min, 16))
    return std::nullopt;
  skip_spaces(s);  // none in practice; tolerated
  if (!parse_number(take_until(s, ' '), e.ino, 10)) return std::nullopt;
  // The name starts after the padding and runs to the end of the line, spaces included.
  skip_spaces(s);
  e.path = unescape_newlines(s);
  return e;
}

std::vector<ProcMapsEntry> parse_proc_maps(std::string_view text) {
  std::vector<ProcMapsEntry> entries;
  while (!text.empty()) {
    std::string_view line = take_until(text, '\n');
    if (auto e = parse_proc_maps_line(line)) entries.push_back(std::move(*e));
  }
  return entries;
}

std::optional<std::vector<ProcMapsEntry>> read_proc_maps(pid_t pid) {
  const std::string p = std::to_string(pid);
  std::string text;
  if (!read_whole_file("/proc/" + p + "/task/" + p + "/maps", text)) return std::nullopt;
  if (text.empty()) {
    // The main thread has exited while others run: its maps is empty, theirs is not.
    for (pid_t tid : list_threads(pid))
      if (tid != pid &&
          read_whole_file("/proc/" + p + "/task/" + std::to_string(tid) + "/maps", text) &&
          !text.empty())
        break;
  }
  return parse_proc_maps(text);
}

}  // namespace profcollect
