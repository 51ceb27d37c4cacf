// PackArgs: the user-facing arguments of `stoker pack` / `stoker.pack()` as strings and numbers,
// their option table, and their translation into PackOptions — one place for the CLI and the
// Python binding. Names are the ones every surface uses (num_workers, on_error, as the loader's).
// Plain values; not thread-safe (one user at a time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/option_table.h"
#include "ingest/input_plan.h"
#include "ingest/pack.h"
#include "ingest/upload_dataset.h"
#include "stoker/status.h"

namespace stoker {

struct PackArgs {
  std::vector<std::string> inputs;
  std::string output;
  std::string tokenizer = "bytes";  // bytes | PATH.model | PATH/tokenizer.json | PATH.tiktoken
  std::string text_field = "text";
  std::string shard_size = "128MiB";  // human size, e.g. 64MiB, 1GiB
  int num_workers = 0;  // tokenizer threads; 0 = cores / LOCAL_WORLD_SIZE (CLI --num-workers)
  std::optional<uint32_t> task_index;  // both or neither; default from Slurm/torchrun env
  std::optional<uint32_t> task_count;
  std::string utf8 = "replace";   // replace | skip | fail
  std::string on_error = "fail";  // fail | skip: bad lines and records (CLI --on-error)
  std::string dtype = "auto";     // auto | uint16 | int32
  bool overwrite = false;
  // Last, so that positional initialisation (the Python binding) keeps working.
  std::string input_format = "auto";   // auto | jsonl | text | webdataset | tfrecord | mds
  std::string key_field;               // records: the field that names a record in errors
  TokenizerOptions tokenizer_options;  // --pattern, --special, --allow-special, --eos (BPE only)
  std::string format = "stoker";       // output: stoker | webdataset | tfrecord (ingest/pack_run.h)
  // Chat data (docs/chat.md): assistant | last | completion | all; empty = assistant for
  // messages, completion for prompt + completion. Setting it (or chat_template) packs chat data.
  std::string train_on;
  std::string chat_template;  // a template file instead of the model directory's own
  // The field holding the conversation (messages, or ShareGPT turns); empty = detected
  // (messages, conversations, prompt + completion). Setting it packs chat data.
  std::string chat_field;
  // Extra chat-template variables, a JSON object (`{"enable_thinking": false}`), as
  // transformers' apply_chat_template(**kwargs) takes them; empty = none. Setting it packs chat.
  std::string chat_template_kwargs;
};

// PackArgs' option table (common/option_table.h): each field declared once, with its doc, CLI flag
// (cmd_pack.cc) and Python keyword (stoker.pack). Thread-safe: built once, immutable.
const OptionTable<PackArgs>& PackArgsTable();

// Validates `args` and fills PackOptions (without progress callback). kInvalidArgument names the
// offending argument.
Result<PackOptions> PackOptionsFromArgs(const PackArgs& args);
// The same for any output stoker can write: a local path, file://, or s3://bucket/prefix (packed
// into a staging directory; FinishPackDestination uploads it after the pack). The options'
// output_dir is `destination->local_dir`.
Result<PackOptions> PackOptionsFromArgs(const PackArgs& args, PackDestination* destination);

// The task of `args`: its task index and count (both or neither), else TaskFromEnvironment().
// kInvalidArgument for only one of them, or an index not below the count.
Result<TaskAssignment> ResolveTask(const PackArgs& args);

}  // namespace stoker
