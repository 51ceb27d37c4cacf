// The streaming path's flags, the same for `stoker bench --stream` and `stoker explain --stream`:
// --stream, --tokenizer with the BPE flags (--pattern --special --allow-special --eos ...),
// --text-field, --shuffle-buffer, --steps-per-epoch (docs/streaming.md).
// Not thread-safe: one command at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "stream/stream_planner.h"

namespace stoker::cli {

// How raw text becomes tokens: --tokenizer with the BPE flags, and --text-field. Shared with
// `stoker index --stream` (cmd_index_stream.h), whose scans must match the stream's.
struct StreamTextFlags {
  std::string tokenizer = "bytes";
  TokenizerOptions tokenizer_options;
  std::string text_field = "text";
};

void AddStreamTextFlags(CLI::App* sub, StreamTextFlags* flags);

struct StreamFlags : StreamTextFlags {
  bool stream = false;  // the DATASET arguments are raw text inputs
  uint64_t shuffle_buffer = stream::StreamOptions{}.shuffle_buffer;
  uint64_t steps_per_epoch = 0;
};

void AddStreamFlags(CLI::App* sub, StreamFlags* flags);

// The stream over `inputs` that the flags describe (the other StreamOptions keep their defaults).
stream::StreamOptions ToStreamOptions(const StreamFlags& flags,
                                      const std::vector<std::string>& inputs);

}  // namespace stoker::cli
