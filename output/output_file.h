// The file a user named as the output of a command (convert's -o): what the name points at
// decides how it is written.
//   "-"                      standard output
//   a device or FIFO         written into as it is (/dev/null stays a device, a FIFO's reader
//                            gets the data); never replaced by a regular file
//   a regular file, or none  replaced atomically (output/atomic_file.h), keeping the mode and
//                            owner of the file it replaces, as perf2bolt's in-place write does;
//                            through a symlink, the file the link points to is replaced and the
//                            link kept
// Errors name the path and the reason. Writing is in two steps, so that several outputs are all
// written or none is: stage() puts the whole content where it waits (a temporary file, fsynced;
// a full disk fails here), commit() makes it the output (the rename; a device or FIFO is opened
// and written only then, so nothing reaches it unless every profile is complete).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "output/atomic_file.h"

namespace profcollect {

class OutputFile {
 public:
  // Checks the destination now (a directory, or a regular file that cannot be replaced, fails
  // before any work is done). Throws OutputError.
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Throws OutputError.
  void stage(std::string_view content);
  void commit();
  // stage() and commit() at once.
  void commit(std::string_view content) {
    stage(content);
    commit();
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<AtomicFileWriter> replaced_;  // regular file or new file
  std::string pending_;                         // for standard output, a device or a FIFO
};

}  // namespace profcollect
