// The streaming path's flags, the one definition of StreamOptions on the command line, shared by
// `stoker bench --stream`, `stoker explain --stream` and `stoker scan` (whose scans the other two
// then find, since the same flags mean the same thing): --tokenizer with the BPE flags (--pattern
// --special --allow-special --eos ...), --text-field, --utf8, --on-error, --scan-cache /
// --no-scan-cache; and for the streams themselves --stream, --shuffle-buffer, --steps-per-epoch,
// --split-factor (docs/streaming.md). Not thread-safe: one command at a time.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "stoker/stream.h"
#include "stream/stream_chat.h"

namespace stoker::cli {

// How raw text becomes tokens and where its pre-scans live: what a scan file is keyed by.
struct StreamTextFlags {
  std::string tokenizer = "bytes";
  TokenizerOptions tokenizer_options;
  std::string text_field = "text";
  std::string utf8 = "replace";   // replace | skip | fail
  std::string on_error = "fail";  // fail | skip: unless the command has the loader's --on-error
  std::string scan_cache;         // "": the default scan cache directory
  bool no_scan_cache = false;
  // Chat records (docs/streaming.md, "Chat records"): pack's flags of these names.
  std::string train_on, chat_template, chat_field;
};

void AddStreamTextFlags(CLI::App* sub, StreamTextFlags* flags);

struct StreamFlags : StreamTextFlags {
  bool stream = false;  // the DATASET arguments are raw text inputs
  uint64_t shuffle_buffer = StreamOptions{}.shuffle_buffer;
  uint64_t steps_per_epoch = 0;
  uint64_t split_factor = StreamOptions{}.split_factor;
  std::vector<const CLI::Option*> stream_only;  // the flags AddStreamFlags added, but --stream
};

void AddStreamFlags(CLI::App* sub, StreamFlags* flags);

// OK, or kInvalidArgument naming a stream flag given without --stream (it would be ignored).
Status CheckStreamFlagsUse(const StreamFlags& flags);

// The scan cache directory the flags name, as StreamOptions::scan_cache_dir spells it.
std::string ScanCacheDir(const StreamTextFlags& flags);

// The chat encoder the flags select over `inputs` (null for text), as a stream selects it.
Result<std::shared_ptr<const ChatEncoder>> StreamChatFromFlags(
    const StreamTextFlags& flags, const std::vector<std::string>& inputs);

// The stream over `inputs` that the flags describe. kInvalidArgument for a bad --utf8.
Result<StreamOptions> ToStreamOptions(const StreamFlags& flags,
                                      const std::vector<std::string>& inputs);

}  // namespace stoker::cli
