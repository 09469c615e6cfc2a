#include "collector/input/perf_data_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "collector/records/buffered_input.h"
#include "collector/input/merged_record_source.h"
#include "collector/input/ordered_record_source.h"
#include "collector/records/perf_abi.h"
#include "collector/input/perf_data_header.h"
#include "collector/records/raw_record_reader.h"

namespace profcollect {

namespace {

namespace fs = std::filesystem;

// A file-mode perf.data (seekable): the header into `state`, a reader over the data section.
RawRecordReader open_file_mode(std::shared_ptr<InputFile> file, PerfSessionState& state,
                               uint32_t stream) {
  DataSection data = read_file_header(*file, state);
  return RawRecordReader(BufferedInput(std::move(file), data.begin, data.end), stream);
}

std::unique_ptr<RecordSource> open_single(const std::string& path) {
  std::shared_ptr<InputFile> file = InputFile::open(path);
  auto state = std::make_unique<PerfSessionState>();
  const uint64_t total = file->size();
  if (file->seekable()) {
    uint8_t first[16];
    if (!file->pread_exact(first, sizeof first, 0))
      throw OpenError(path, file->size() == 0 ? "empty file" : "shorter than a perf.data header");
    if (perf_data_mode(first, path) == PerfDataMode::File) {
      RawRecordReader reader = open_file_mode(file, *state, 0);
      return std::make_unique<OrderedRecordSource>(std::move(state), std::move(reader), total);
    }
    BufferedInput in(std::move(file), perf_abi::kPipeHeaderSize, BufferedInput::kToEnd);
    return std::make_unique<OrderedRecordSource>(std::move(state),
                                                 RawRecordReader(std::move(in), 0), total);
  }
  // A pipe: only pipe mode can be read front to back.
  BufferedInput in(std::move(file), 0, BufferedInput::kToEnd);
  if (in.fill(16) < 16) throw OpenError(path, "input ends before a perf.data header");
  if (perf_data_mode(in.data(), path) != PerfDataMode::Pipe)
    throw OpenError(path, "a file-mode perf.data cannot be read from a pipe; pass its path");
  in.consume(16);
  return std::make_unique<OrderedRecordSource>(std::move(state), RawRecordReader(std::move(in), 0),
                                               0);
}

// `perf record --threads` writes DIR/data (a perf.data whose data section holds the
// synthesized records) and DIR/data.N (bare records of recording thread N).
std::unique_ptr<RecordSource> open_directory(const std::string& path) {
  auto state = std::make_unique<PerfSessionState>();
  std::vector<RawRecordReader> readers;
  const fs::path dir(path);
  std::shared_ptr<InputFile> header = InputFile::open((dir / "data").string());
  if (!header->seekable()) throw OpenError(header->name(), "not a regular file");
  uint8_t first[16];
  if (!header->pread_exact(first, sizeof first, 0) ||
      perf_data_mode(first, header->name()) != PerfDataMode::File)
    throw OpenError(header->name(), "not a file-mode perf.data header");
  uint64_t total = header->size();
  readers.push_back(open_file_mode(header, *state, 0));

  std::vector<std::pair<unsigned long, std::string>> parts;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 5 && name.size() <= 14 && name.compare(0, 5, "data.") == 0 &&
        std::all_of(name.begin() + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      parts.emplace_back(std::stoul(name.substr(5)), entry.path().string());
  }
  if (ec) throw OpenError(path, ec.message());
  std::sort(parts.begin(), parts.end());
  for (const auto& [n, part_path] : parts) {
    std::shared_ptr<InputFile> part = InputFile::open(part_path);
    total += part->size();
    readers.emplace_back(BufferedInput(std::move(part), 0, BufferedInput::kToEnd),
                         static_cast<uint32_t>(readers.size()));
  }
  return std::make_unique<MergedRecordSource>(std::move(state), std::move(readers), total);
}

}  // namespace

std::unique_ptr<RecordSource> open_perf_data(const std::string& path) {
  struct stat st;
  if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return open_directory(path);
  return open_single(path);
}

}  // namespace profcollect
