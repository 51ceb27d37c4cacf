// Pack: the `stoker pack` pipeline — raw text in, a stoker dataset (Megatron shards + manifest)
// out.
//
// Stages: one reader thread reads the task's input files in order (one file open at a time) and
// cuts them into batches of documents; `threads` workers encode batches (UTF-8 policy, JSON,
// tokenizer, EOS) in any order; the calling thread restores batch order and writes shards, so the
// output bytes do not depend on the thread count. At most 2 * threads + 2 batches are in flight,
// which bounds memory. The manifest is written last: the dataset is complete iff it exists.
// Pack itself is thread-safe (no shared state); the tokenizer is shared by its workers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_encoder.h"
#include "format/manifest.h"
#include "ingest/document_encoder.h"
#include "ingest/record_inputs.h"
#include "ingest/task_plan.h"
#include "stoker/status.h"
#include "text/tokenizer.h"

namespace stoker {

// 128 MiB: Megatron-style "few large files" (docs/design.md asks for ~100 MB+) — a 1 T-token uint16
// corpus is ~16,000 shards, one manifest entry and two mappings each — while one shard still
// downloads into a cache in about a second and a single task of a small job still produces
// several shards to spread over readers.
inline constexpr uint64_t kDefaultShardSizeBytes = 128ull << 20;

// Vocabularies below this use uint16 tokens (megatron-core's DType.optimal_dtype threshold).
inline constexpr uint64_t kUint16VocabLimit = 65500;

struct PackProgress {
  uint64_t documents = 0;
  uint64_t tokens = 0;
  uint64_t input_bytes = 0;       // decompressed bytes read so far
  uint64_t disk_bytes_done = 0;   // on-disk bytes of the inputs finished so far (for the ETA)
  uint64_t disk_bytes_total = 0;  // on-disk bytes of this task's inputs
  double elapsed_s = 0;
};

struct PackOptions {
  std::vector<std::string> inputs;  // files, directories, record shards: ingest/record_inputs.h
  PackInputFormat input_format = PackInputFormat::kAuto;
  std::string key_field;  // records: the field naming each record in errors (optional)
  std::string output_dir;
  DocumentEncoderOptions encoder;
  uint64_t shard_size_bytes = kDefaultShardSizeBytes;
  int threads = 1;  // encoding workers (>= 1)
  uint32_t task_index = 0;
  uint32_t task_count = 1;
  std::optional<TokenDType> dtype;  // default: uint16 if the vocabulary allows, else int32
  bool overwrite = false;
  // Documents per work item, by raw size: about 20 ms of BPE work, so that handing items over
  // (a wake-up or two each) stays out of the encoders' way. Small inputs still make enough items:
  // the reader shrinks the items towards the end of the input (pack.cc), so the workers finish
  // together (1 MiB without that made 5 items of a 4.7 MB input, and 2 threads waited on the
  // last one). At 256 KiB, 2 threads on 2 cores context-switched 5 times as often.
  uint64_t batch_bytes = 1 << 20;
  // Called on the calling thread after each batch is written; may be empty.
  std::function<void(const PackProgress&)> on_progress;
  // A task of a task-split pack (ingest/pack_task.h): the inputs are cut down to this recorded
  // plan, and only this task's shards are written (no length index, no manifest; the output
  // directory is shared with the other tasks, whose files are left alone).
  std::shared_ptr<const TaskPlan> plan;
  // Chat data (docs/chat.md): each JSONL line is a conversation, encoded by this with its loss
  // mask, which is written beside the shards as the dataset's loss_mask/ (format/loss_mask.h).
  std::shared_ptr<const ChatEncoder> chat;
};

struct PackResult {
  Manifest manifest;
  PackCounters counters;
  uint64_t input_files = 0;  // files in this task's slice
  uint64_t total_files = 0;  // files in the whole input list
  double elapsed_s = 0;
};

// Packs this task's slice of options.inputs into options.output_dir. Errors: kInvalidArgument
// (bad options, bad input under the chosen policies, no documents at all), kNotFound (missing
// input), kAlreadyExists (a dataset is there and overwrite is off), kIOError / kCorruption from
// reading. On error no manifest is written and the shards this run wrote are removed.
Result<PackResult> Pack(const PackOptions& options, const Tokenizer& tokenizer);

// The dtype Pack uses for `tokenizer` when none is forced; kInvalidArgument if `forced` cannot
// hold the vocabulary.
Result<TokenDType> ChooseDType(const Tokenizer& tokenizer, std::optional<TokenDType> forced);

}  // namespace stoker
