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
  // Every row of StreamOptionTable() with a CLI spelling writes its field here (help, default and
  // check from the row; a row added to the table is a flag with no other edit): --tokenizer
  // --text-field --utf8 --scan-cache and the chat flags (pack's help texts, tokenizer_flags.h),
  // and with AddStreamFlags --shuffle-buffer --steps-per-epoch --split-factor. The tokenizer's
  // own rows write options.tokenizer_options.
  StreamOptions options;
  std::string on_error = "fail";  // fail | skip: unless the command has the loader's --on-error
  bool no_scan_cache = false;
};

void AddStreamTextFlags(CLI::App* sub, StreamTextFlags* flags);

struct StreamFlags : StreamTextFlags {
  bool stream = false;                          // the DATASET arguments are raw text inputs
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

// The stream over `inputs` that the flags describe.
Result<StreamOptions> ToStreamOptions(const StreamFlags& flags,
                                      const std::vector<std::string>& inputs);

}  // namespace stoker::cli
