// `stoker index --stream INPUT...`: the cached pre-scan of streamed inputs (stream/prescan.h).
// Kept apart from cmd_index.cc (the packed datasets' length index); cmd_index.cc only adds these
// flags and hands the inputs over. Not thread-safe: one command at a time.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "stoker/stream_flags.h"

namespace stoker::cli {

// --tokenizer, the BPE flags and --text-field as for `bench --stream` (stream_flags.h).
struct StreamIndexArgs : StreamTextFlags {
  bool stream = false;
  std::string utf8 = "replace";
  std::string on_error = "fail";
  bool beside = false;
  std::string cache_dir;  // "": the default (DefaultScanCacheDir)
};

// Adds --stream and its flags to `index`, and lets it take more than one INPUT.
void AddStreamIndexFlags(CLI::App* sub, StreamIndexArgs* args);

// Scans `inputs` (the first INPUT and the rest) and writes their scans. Returns the exit code.
int RunStreamIndex(const std::vector<std::string>& inputs, const StreamIndexArgs& args);

}  // namespace stoker::cli
