// `stoker scan INPUT...`: the cached pre-scan of streamed inputs (stream/prescan.h), so that
// stoker.Stream and `bench --stream` fix their steps per epoch without reading the data. It takes
// the streams' own text flags (stream_flags.h: tokenizer, --text-field, --utf8, --on-error,
// --scan-cache), so a scan written with the flags of a stream is the one that stream finds.
// `stoker index --stream` is its deprecated former spelling (cmd_index.cc).
// Not thread-safe: one command at a time.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "stream_flags.h"

namespace stoker::cli {

struct ScanArgs : StreamTextFlags {
  std::vector<std::string> inputs;
  bool beside = false;  // write .<file>.stoker-scan beside each input instead of the cache
};

// Registers --beside and the stream text flags (not the INPUT positional).
void AddScanFlags(CLI::App* sub, ScanArgs* args);

// Scans `args.inputs` and writes their scans. Returns the exit code; `command` names it in errors.
int RunScan(const ScanArgs& args, const char* command);

}  // namespace stoker::cli
