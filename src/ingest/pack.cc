#include "ingest/pack.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <thread>

#include "common/file_util.h"
#include "format/dataset_length_index.h"
#include "format/token_convert.h"
#include "ingest/dataset_dir.h"
#include "ingest/input_reader.h"
#include "ingest/shard_sink.h"

namespace stoker {
namespace {

constexpr uint64_t kMinTailBatch = 16 << 10;

// A batch of raw documents on its way to a worker, numbered in input order.
struct WorkItem {
  uint64_t seq = 0;
  std::vector<RawDocument> docs;
  Status read_error;  // the reader failed after these documents
  uint64_t disk_bytes_done = 0;
};

struct DoneItem {
  EncodedDocuments encoded;
  std::vector<uint8_t> stored;  // the tokens as the dtype's bytes, unless that is int32 itself
  Status status;
  uint64_t disk_bytes_done = 0;

  std::span<const uint8_t> bytes() const {
    if (!stored.empty() || encoded.tokens.empty()) return stored;
    return {reinterpret_cast<const uint8_t*>(encoded.tokens.data()),
            encoded.tokens.size() * sizeof(int32_t)};
  }
};

// On the encode thread: checks that every id and every length fits the shard and stores the ids
// as the dtype, so that the writer thread only orders, hashes and writes.
Status StoreTokens(TokenDType dtype, DoneItem* done) {
  const std::vector<int32_t>& tokens = done->encoded.tokens;
  for (uint64_t len : done->encoded.lengths) {
    if (len > static_cast<uint64_t>(INT32_MAX)) {
      return InvalidArgument("a document has " + std::to_string(len) +
                             " tokens, more than a Megatron index can record (2^31 - 1)");
    }
  }
  const uint64_t max_id = MaxTokenForDType(dtype);
  if (!TokensFit(tokens.data(), tokens.size(), max_id)) {
    for (int32_t id : tokens) {
      if (id < 0 || static_cast<uint64_t>(id) > max_id) {
        return InvalidArgument("token id " + std::to_string(id) + " does not fit the dataset's " +
                               std::string(TokenDTypeName(dtype)) + " tokens");
      }
    }
  }
  if (dtype != TokenDType::kInt32) {
    done->stored.resize(tokens.size() * TokenDTypeSize(dtype));
    StoreFittingTokens(tokens.data(), tokens.size(), dtype, done->stored.data());
  }
  return Status::OK();
}

// The reader -> workers -> writer graph. One mutex guards the queue, the reorder map and the
// counters; each kind of thread waits on a condition variable of its own and is woken only when
// its own condition may have become true (a worker when a batch is queued, the writer when the
// batch it waits for is filed, the reader when a slot frees), not on every change: on a machine
// with as many encode threads as cores, every needless wake-up takes a core from an encoder.
class Pipeline {
 public:
  Pipeline(const PackOptions& options, const std::vector<InputFile>& files, TaskSlice slice,
           const DocumentEncoder& encoder, TokenDType dtype)
      : options_(options),
        files_(files),
        slice_(slice),
        encoder_(encoder),
        dtype_(dtype),
        max_in_flight_(2 * static_cast<uint64_t>(options.threads) + 2) {}

  // Runs the graph, handing each encoded batch to `write` in input order. Returns the first error
  // in input order (a batch's error, or write's).
  Status Run(const std::function<Status(const DoneItem&)>& write) {
    std::thread reader([this] { ReadLoop(); });
    std::vector<std::thread> workers;
    for (int i = 0; i < options_.threads; ++i) workers.emplace_back([this] { WorkLoop(); });
    Status status = WriteLoop(write);
    Cancel();  // no-op on success: everything has been consumed
    reader.join();
    for (auto& w : workers) w.join();
    return status;
  }

 private:
  // 1. Read batches in order; 2. wait for room (bounded in-flight count); 3. queue them.
  // The batches shrink towards the end of the input (down to kMinTailBatch), so that the
  // workers run out of work together rather than one waiting while another encodes a full
  // last batch (the order, and so the output, does not depend on the batch sizes).
  void ReadLoop() {
    // Chat data: each record is read whole, as the JSON object a JSONL line would hold.
    InputReader input(&files_, slice_, options_.batch_bytes,
                      options_.chat ? std::string(kWholeRecord) : options_.encoder.text_field,
                      options_.key_field, options_.encoder.skip_bad_lines);
    uint64_t disk_left = 0;
    for (size_t i = slice_.first; i < slice_.last; ++i) disk_left += files_[i].size_bytes;
    const uint64_t spread = 4 * static_cast<uint64_t>(options_.threads);
    while (true) {
      WorkItem item;
      input.set_batch_bytes(
          std::min(options_.batch_bytes, std::max(kMinTailBatch, disk_left / spread)));
      Result<bool> more = input.NextBatch(&item.docs, &item.disk_bytes_done);
      disk_left -= std::min(disk_left, item.disk_bytes_done);
      if (!more.ok()) item.read_error = more.status();
      bool last = !more.ok() || !*more;
      if (!item.docs.empty() || !item.read_error.ok()) {
        if (!Submit(std::move(item))) break;
      }
      if (last) break;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      reader_done_ = true;
    }
    work_cv_.notify_all();  // idle workers exit once the queue is empty
    done_cv_.notify_one();  // the writer may be waiting past the last batch
  }

  bool Submit(WorkItem item) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      room_cv_.wait(lock, [this] { return cancelled_ || in_flight_ < max_in_flight_; });
      if (cancelled_) return false;
      item.seq = produced_++;
      ++in_flight_;
      queue_.push_back(std::move(item));
    }
    work_cv_.notify_one();
    return true;
  }

  // 1. Take a batch; 2. encode and store it outside the lock; 3. file the result under its
  // number, waking the writer if it is the batch the writer waits for.
  void WorkLoop() {
    while (true) {
      WorkItem item;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [this] { return cancelled_ || !queue_.empty() || reader_done_; });
        if (cancelled_ || queue_.empty()) return;
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      DoneItem done;
      done.disk_bytes_done = item.disk_bytes_done;
      for (const RawDocument& doc : item.docs) {
        done.status = encoder_.Encode(doc, files_[doc.file_index].path, &done.encoded);
        if (!done.status.ok()) break;
      }
      if (done.status.ok()) done.status = StoreTokens(dtype_, &done);
      if (done.status.ok()) done.status = item.read_error;
      bool wanted;
      {
        std::lock_guard<std::mutex> lock(mu_);
        wanted = item.seq == next_write_;
        done_.emplace(item.seq, std::move(done));
      }
      if (wanted) done_cv_.notify_one();
    }
  }

  // 1. Wait for the next batch in order; 2. release its in-flight slot; 3. write it.
  Status WriteLoop(const std::function<Status(const DoneItem&)>& write) {
    while (true) {
      DoneItem item;
      {
        std::unique_lock<std::mutex> lock(mu_);
        done_cv_.wait(lock, [&] {
          return done_.count(next_write_) > 0 || (reader_done_ && next_write_ == produced_);
        });
        auto it = done_.find(next_write_);
        if (it == done_.end()) return Status::OK();  // the reader is done and all were written
        item = std::move(it->second);
        done_.erase(it);
        ++next_write_;
        --in_flight_;
      }
      room_cv_.notify_one();
      if (!item.status.ok()) return item.status;
      STOKER_RETURN_IF_ERROR(write(item));
    }
  }

  void Cancel() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    work_cv_.notify_all();
    room_cv_.notify_all();
  }

  const PackOptions& options_;
  const std::vector<InputFile>& files_;
  TaskSlice slice_;
  const DocumentEncoder& encoder_;
  const TokenDType dtype_;
  const uint64_t max_in_flight_;

  std::mutex mu_;
  std::condition_variable work_cv_;    // workers: a batch queued, the reader done, or cancelled
  std::condition_variable done_cv_;    // the writer: batch next_write_ filed, or the reader done
  std::condition_variable room_cv_;    // the reader: an in-flight slot free, or cancelled
  std::deque<WorkItem> queue_;         // guarded by mu_
  std::map<uint64_t, DoneItem> done_;  // guarded by mu_: encoded batches waiting for their turn
  uint64_t produced_ = 0;              // guarded by mu_
  uint64_t next_write_ = 0;            // guarded by mu_: the batch the writer takes next
  uint64_t in_flight_ = 0;             // guarded by mu_: submitted and not yet written
  bool reader_done_ = false;           // guarded by mu_
  bool cancelled_ = false;             // guarded by mu_
};

Status ValidateOptions(const PackOptions& o) {
  if (o.inputs.empty()) return InvalidArgument("no inputs given");
  if (o.output_dir.empty()) return InvalidArgument("no output directory given");
  if (o.threads < 1) return InvalidArgument("--threads must be at least 1");
  if (o.shard_size_bytes == 0) return InvalidArgument("--shard-size must be positive");
  if (o.task_count == 0 || o.task_index >= o.task_count) {
    return InvalidArgument("task index " + std::to_string(o.task_index) +
                           " is not below task count " + std::to_string(o.task_count));
  }
  if (o.encoder.text_field.empty()) return InvalidArgument("--text-field must not be empty");
  if (o.chat && o.plan) {
    return InvalidArgument("chat data is packed in one task for now (without --task-count)");
  }
  return Status::OK();
}

// The loss mask's own dataset (Manifest::loss_mask): its shards, length index and manifest.
Status WriteLossMaskDataset(const std::string& dir, std::vector<ShardInfo> shards,
                            uint64_t documents) {
  Manifest m;
  m.tokenizer = {"loss-mask", std::string(kLossMaskTokenizer), 0, -1, ""};
  m.dtype = TokenDType::kInt32;
  m.shards = std::move(shards);
  m.counters = {{"documents", documents}};
  STOKER_ASSIGN_OR_RETURN(LengthIndexInfo index, BuildDatasetLengthIndex(dir, m));
  m.length_index = std::move(index);
  return WriteManifest(dir, m);
}

}  // namespace

Result<TokenDType> ChooseDType(const Tokenizer& tokenizer, std::optional<TokenDType> forced) {
  uint64_t vocab = tokenizer.vocab_size();
  if (!forced) return vocab < kUint16VocabLimit ? TokenDType::kUint16 : TokenDType::kInt32;
  if (*forced == TokenDType::kUint16 && vocab > 65536) {
    return InvalidArgument("--dtype uint16 cannot hold a vocabulary of " + std::to_string(vocab));
  }
  if (*forced != TokenDType::kUint16 && *forced != TokenDType::kInt32) {
    return InvalidArgument("--dtype must be uint16 or int32");
  }
  return *forced;
}

Result<PackResult> Pack(const PackOptions& options, const Tokenizer& tokenizer) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  STOKER_RETURN_IF_ERROR(ValidateOptions(options));
  STOKER_ASSIGN_OR_RETURN(TokenDType dtype, ChooseDType(tokenizer, options.dtype));
  // A task of a task-split pack reads its inputs from the recorded plan: nothing is listed.
  std::vector<InputFile> files;
  if (options.plan && options.plan->has_kinds()) {
    STOKER_ASSIGN_OR_RETURN(
        files, PlannedInputFiles(*options.plan, options.plan->Slice(options.task_index)));
  } else {
    STOKER_ASSIGN_OR_RETURN(files, ExpandPackInputs(options.inputs, options.input_format));
    if (options.plan) {
      STOKER_ASSIGN_OR_RETURN(files, ApplyTaskPlan(std::move(files), *options.plan));
    }
  }
  if (files.empty()) {
    return InvalidArgument(
        "no input files: the inputs are empty directories (hidden files are "
        "ignored)");
  }
  STOKER_RETURN_IF_ERROR(CheckOutputOutsideInputs(options.output_dir, options.inputs));
  // The replaced dataset's shards are deleted while this one is encoded.
  std::unique_ptr<BackgroundDeletion> old_files;
  if (options.plan) {
    STOKER_RETURN_IF_ERROR(MakeDirectories(options.output_dir));  // shared with the other tasks
  } else {
    STOKER_RETURN_IF_ERROR(PrepareOutputDir(
        options.output_dir, {options.overwrite, /*remove_stale_shards=*/true}, &old_files));
  }

  TaskSlice slice = SliceForTask(files, options.task_index, options.task_count);
  PackResult result;
  result.total_files = files.size();
  result.input_files = slice.last - slice.first;
  PackProgress progress;
  for (size_t i = slice.first; i < slice.last; ++i)
    progress.disk_bytes_total += files[i].size_bytes;

  DocumentEncoder encoder(&tokenizer, options.encoder, options.chat.get());
  ShardSink sink(options.output_dir, options.task_index, dtype, options.shard_size_bytes);
  // Chat data: the loss mask's spans, a dataset of their own beside the tokens.
  const std::string mask_dir = JoinPath(options.output_dir, LossMaskInfo{}.dataset);
  std::optional<ShardSink> mask_sink;
  if (options.chat) {
    STOKER_RETURN_IF_ERROR(PrepareOutputDir(mask_dir, {/*overwrite=*/true, true}, nullptr));
    mask_sink.emplace(mask_dir, options.task_index, TokenDType::kInt32, options.shard_size_bytes);
  }
  Pipeline pipeline(options, files, slice, encoder, dtype);
  Status status = pipeline.Run([&](const DoneItem& item) -> Status {
    const EncodedDocuments& enc = item.encoded;
    STOKER_RETURN_IF_ERROR(sink.AddStored(item.bytes(), enc.lengths));
    if (mask_sink) {
      STOKER_RETURN_IF_ERROR(mask_sink->AddStored(
          {reinterpret_cast<const uint8_t*>(enc.spans.data()), enc.spans.size() * sizeof(int32_t)},
          enc.span_lengths));
    }
    result.counters.Add(enc.counters);
    progress.documents = result.counters.documents;
    progress.tokens += enc.tokens.size();
    progress.input_bytes = result.counters.input_bytes;
    progress.disk_bytes_done += item.disk_bytes_done;
    progress.elapsed_s = elapsed();
    if (options.on_progress) options.on_progress(progress);
    return Status::OK();
  });
  if (status.ok() && result.counters.documents == 0 && options.task_count == 1) {
    // Under --on-error skip the reasons are printed after a pack, which this one is not: the
    // most frequent is the error's (a tokenizer no conversation can be encoded with).
    std::string why;
    uint64_t most = 0;
    for (const auto& [reason, r] : result.counters.skip_reasons) {
      if (r.count > most) {
        most = r.count;
        why =
            "; skipped " + std::to_string(r.count) + ": " + reason + " (first at " + r.first + ")";
      }
    }
    status = InvalidArgument("the inputs hold no documents (" + std::to_string(files.size()) +
                             " file(s), every document empty or skipped" + why + ")");
  }
  Result<std::vector<ShardInfo>> shards =
      status.ok() ? sink.Finish() : Result<std::vector<ShardInfo>>(status);
  Result<std::vector<ShardInfo>> mask_shards = std::vector<ShardInfo>{};
  if (mask_sink && shards.ok()) mask_shards = mask_sink->Finish();
  if (!mask_shards.ok()) shards = Result<std::vector<ShardInfo>>(mask_shards.status());
  if (Status deleted = old_files ? old_files->Wait() : Status::OK(); shards.ok() && !deleted.ok()) {
    shards = Result<std::vector<ShardInfo>>(deleted);
  }
  auto remove_shards = [&] {
    sink.RemoveFinishedShards();
    if (mask_sink) mask_sink->RemoveFinishedShards();
  };
  if (!shards.ok()) {
    remove_shards();
    return shards.status();
  }

  Manifest& m = result.manifest;
  const TokenizerIdentity& id = tokenizer.identity();
  m.tokenizer = {id.kind, id.name, tokenizer.vocab_size(), tokenizer.eos_id(), id.checksum};
  m.dtype = dtype;
  m.shards = std::move(*shards);
  m.counters = result.counters.ToMap();
  m.counters["task_index"] = options.task_index;
  m.counters["task_count"] = options.task_count;
  if (options.plan) {  // a task's shards: its receipt (ingest/pack_task.h) publishes them
    result.elapsed_s = elapsed();
    return result;
  }
  // The length index before the manifest: a dataset is complete when its manifest exists.
  Status written = Status::OK();
  if (mask_sink) {
    written = WriteLossMaskDataset(mask_dir, std::move(*mask_shards), result.counters.documents);
    m.loss_mask = LossMaskInfo{LossMaskInfo{}.dataset, result.counters.trained_tokens};
  }
  Result<LengthIndexInfo> length_index =
      written.ok() ? BuildDatasetLengthIndex(options.output_dir, m) : written;
  written = length_index.status();
  if (written.ok()) {
    m.length_index = *length_index;
    written = WriteManifest(options.output_dir, m);
  }
  if (!written.ok()) {
    remove_shards();
    std::remove(JoinPath(options.output_dir, kLengthIndexFileName).c_str());
    return written;
  }
  result.elapsed_s = elapsed();
  return result;
}

}  // namespace stoker
