// The kernel's own mappings as perf synthesizes them at the start of a system-wide recording
// (the kernel never reports them): one MMAP of pid -1 for the kernel image, named
// "[kernel.kallsyms]_text" (or "_stext") with pgoff the runtime address of that symbol, so the
// image translator (mapper/image_translator.h) takes the KASLR slide from it; and one per
// loaded module, named "[NAME]", over the module's memory (/proc/modules). The strings the
// records point into live in this object.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "collector/kernel/kallsyms.h"
#include "record/record.h"

namespace profcollect {

class KernelLayoutRecords {
 public:
  // Throws SettingError when kallsyms has neither _text nor _stext (or hides the addresses).
  KernelLayoutRecords(const KallsymsTable& kallsyms, const std::vector<LoadedModule>& modules);

  const std::vector<Record>& records() const { return records_; }
  // The runtime address of the kernel's reference symbol (_text, else _stext).
  uint64_t text() const { return text_; }
  uint64_t text_end() const { return text_end_; }

 private:
  std::deque<std::string> names_;  // stable addresses for the records' file names
  std::vector<Record> records_;
  uint64_t text_ = 0, text_end_ = 0;
};

}  // namespace profcollect
