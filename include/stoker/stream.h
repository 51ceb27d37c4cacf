// The streaming path: raw text (JSONL, text files, record shards) tokenized online and packed into
// batches by the loader's engine, with the indexed path's workers, pinned ring, copier, monitor,
// stats and checkpoints. Shards are dealt to ranks per epoch, a shuffle buffer mixes documents,
// and every rank takes the same number of steps. See docs/streaming.md.
// Thread-safe: OpenStreamLoader may be called from any thread; the Loader is as stoker/loader.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stoker/loader.h"
#include "stoker/planner.h"
#include "stoker/status.h"
#include "stoker/tokenizer.h"

namespace stoker {

struct StreamOptions {
  std::vector<std::string> inputs;  // files and directories (ingest's expansion rules)
  std::string tokenizer = "bytes";  // an OpenTokenizer spec, unless tokenizer_instance is set
  TokenizerOptions tokenizer_options;
  std::shared_ptr<const Tokenizer> tokenizer_instance;
  std::string text_field = "text";
  Utf8Policy utf8 = Utf8Policy::kReplace;
  uint64_t shuffle_buffer = 10000;
  uint64_t steps_per_epoch = 0;  // 0: from the pre-scan
  // Files are split into byte ranges until there are world_size * split_factor shards. Not tied
  // to num_workers, so that the batches do not depend on it.
  uint64_t split_factor = 8;
  // Threads that decode and tokenize (one pool per planner); 0: the loader's num_workers (itself
  // 0: DefaultThreadsPerRank, the node's cores / LOCAL_WORLD_SIZE). Only the speed depends on it,
  // never the batches.
  int encode_threads = 0;
  // The cached pre-scan (`stoker scan`, src/stream/prescan.h): "auto" = the cache root's
  // stream-scan/, "" = none (as LoaderOptions::cache_dir; "off" is read as "" too), else a
  // directory. Scans beside the data (.<file>.stoker-scan) are read too.
  std::string scan_cache_dir = "auto";
  // Chat records (docs/chat.md): rendered by the chat template of `tokenizer` (a model directory)
  // or `chat_template` (a file), with the loss mask of `train_on` (empty: assistant for
  // messages, completion for prompt + completion) and the conversation in `chat_field` (empty:
  // detected). Chat when any of the three is set, or when the first record of the first input is
  // a conversation without `text_field`. Batches then have labels and loss_mask as the indexed
  // loader gives them, and long conversations are dropped (LoaderOptions::long_documents).
  std::string train_on, chat_template, chat_field;
  // Extra chat-template variables, a JSON object (`{"enable_thinking": false}`); empty = none.
  std::string chat_template_kwargs;
};

// What the pre-scan read as a stream opened (for reports such as `stoker bench --stream`).
struct StreamScanSummary {
  uint64_t files = 0;            // files it counted (0: StreamOptions::steps_per_epoch was given)
  uint64_t files_from_scan = 0;  // of them, read from scan files (`stoker scan`)
};

// Opens a loader over the stream described by `options`; `loader` gives seq_len, batch_size,
// seed, world_size, rank, pack, on_error and the engine's options. `resume`: a state from
// Loader::State() of the same stream and world size (kFailedPrecondition otherwise); for another
// world size, Restore the state that loader->planner().ElasticState gives from every old rank's
// state. `scan`, if given, receives what the pre-scan read. Steps per epoch, fingerprint, states
// for a position and provenance: the loader's planner() (stoker/planner.h).
Result<std::unique_ptr<Loader>> OpenStreamLoader(const StreamOptions& options,
                                                 const LoaderOptions& loader,
                                                 const PlanState* resume = nullptr,
                                                 StreamScanSummary* scan = nullptr);

// The stream's planner alone, without the engine's threads (as `stoker explain --stream` uses
// it): steps per epoch, states and provenance of any step, from the same options.
Result<std::shared_ptr<const BatchPlanner>> OpenStreamPlanner(const StreamOptions& options,
                                                              const LoaderOptions& loader);

}  // namespace stoker
