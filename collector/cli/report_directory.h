// `profcollect report DIR`: what a live collection's output directory holds -- the collection
// summary (DIR/collection.json: event, rate, samples, losses, unmapped samples by reason) and
// per binary (DIR/<binary>-<build-id>/meta.json and bolt.fdata) its samples and top functions.
// Reads the files only; never opens the binaries, so it works where they are gone.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "collector/cli/report_command.h"

namespace profcollect {

// Whether `path` is a collection's output directory rather than perf.data input: a directory
// without the `data` file of a `perf record --threads` directory.
bool is_collection_directory(const std::string& path);

// One line on what BOLT address translation did, from meta.json's "bolt_address_translation"
// (output/profile_renderer.h) of a BOLTed binary with `samples` samples: the share translated to
// the input binary, or why nothing was.
std::string translation_line(const nlohmann::ordered_json& bat, uint64_t samples);

// Prints the report of the directory `options.input` (text, or JSON with options.json).
// Returns 0; throws CliError when the directory holds no profcollect output or a file in it
// cannot be read (after printing what could be read).
int run_directory_report(const ReportOptions& options);

}  // namespace profcollect
