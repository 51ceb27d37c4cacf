// StreamPlanner: the streaming path's planner for the loader's engine (loader::BatchPlanner). It
// produces one rank's rows in a fixed order from (seed, epoch, rank) and its checkpoint: shards
// dealt per epoch (shards.h), a shuffle buffer, online tokenization and packing (rank_stream.h).
// Rows are generated in step order under a lock (so the batches are the same for any num_workers);
// the documents behind them are decoded and tokenized ahead on a pool of num_workers threads
// (DocPipeline, in read order). Their tokens are served to the workers by StreamTokenSource, which
// the engine reads like any TokenSource. Steps per epoch are equal on every rank: steps_per_epoch
// if given, else a pre-scan counts every shard's document lengths once and each epoch takes the
// smallest rank's row count. Thread-safe: every method may be called from many threads at once (one
// internal lock).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "loader/batch_planner.h"
#include "stoker/loader.h"
#include "storage/metering_backend.h"
#include "stream/prescan.h"
#include "stream/rank_stream.h"

namespace stoker::stream {

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
  // The cached pre-scan (`stoker scan`, prescan.h): "auto" = DefaultScanCacheDir(), "" = none
  // (as LoaderOptions::cache_dir; "off" is read as "" too), else a directory. Scans beside the
  // data (.<file>.stoker-scan) are read too.
  std::string scan_cache_dir = "auto";
};

// The loader options a stream cannot honour are refused, never ignored: shuffle other than
// "global" (a stream's order is its shard dealing and shuffle buffer), block_shards other than the
// default, and remainder "pad" (drop_last=False). kInvalidArgument naming the option.
Status CheckStreamLoaderOptions(const LoaderOptions& options);

class StreamPlanner final : public loader::BatchPlanner {
 public:
  // The loader options give seq_len, batch_size, seed, world_size, rank, pack, bestfit_window,
  // on_error and num_workers (CheckStreamLoaderOptions refuses the ones a stream cannot honour).
  static Result<std::shared_ptr<StreamPlanner>> Create(const StreamOptions& options,
                                                       const LoaderOptions& loader);

  PlanPosition Normalize(const PlanPosition& pos) const override;
  PlanPosition Advance(const PlanPosition& pos) const override;
  Status BatchAt(const PlanPosition& pos, Batch* out) const override;
  PlanState MakeState(const PlanPosition& pos) const override;
  Result<PlanPosition> RestorePosition(const PlanState& state) const override;

  uint64_t steps_per_epoch(uint64_t epoch) const;
  // Elastic resume (elastic.cc, docs/streaming.md): from the states of every rank of another
  // world (or batch size), all at the same step, the state that continues this rank: the epoch's
  // unread documents (open shards' tails, undealt shards, shuffle buffers, packers' leftovers)
  // dealt to this world, with equal steps for the rest of the epoch. Every rank of this world
  // gives the same `states` and gets its own share; restore it with RestorePosition.
  Result<PlanState> ElasticState(const std::vector<PlanState>& states) const;
  // This rank's rows at the step starting at `pos`, with each piece's document reference.
  Result<std::vector<PackedRow>> RowsAt(const PlanPosition& pos) const;
  const std::vector<StreamShard>& shards() const { return ctx_->shards; }
  const std::string& fingerprint() const { return fingerprint_; }
  // What the pre-scan at Create read: files, and how many of them from scan files (`stoker scan`).
  const PrescanSummary& prescan_summary() const { return prescan_; }
  // Threads that decode and tokenize for this planner (its EncodePool; also the pre-scan's).
  int encode_threads() const { return ctx_->pool->threads(); }
  // The TokenSource that serves the planned rows' tokens (dataset 0 of every row).
  std::shared_ptr<const TokenSource> token_source() const { return source_; }
  // Remote record shards: every request their stores made (listings and reads), summed over the
  // expansions of the inputs this planner made (at open, and for elastic states).
  StorageStats storage_stats() const { return storage_.Total(); }

  // For StreamTokenSource: the tokens of piece handle `doc`, or null if it was evicted.
  Tokens PieceTokens(uint64_t doc) const;
  // The shard list that pieces of `stream_epoch` refer to (another world's after an elastic
  // resume into that epoch).
  std::shared_ptr<const std::vector<StreamShard>> ShardsOf(uint64_t stream_epoch) const;

 private:
  struct Entry {
    uint64_t id = 0;
    std::vector<PackedRow> rows;
    std::vector<Row> plan_rows;
    std::vector<Tokens> pieces;  // by handle & kPieceMask
    std::string state_before;    // RankSnapshot::Encode at the step's start
  };
  struct Generator {
    std::unique_ptr<RankStream> stream;
    uint64_t next_step = 0;
  };
  static constexpr int kPieceBits = 28;

  StreamPlanner() = default;
  Status PreScan();
  uint64_t RowsOfRank(uint64_t epoch, uint32_t rank) const;
  // The fingerprint of this stream for another world size / batch size over `shards`.
  std::string FingerprintFor(const std::vector<StreamShard>& shards, uint32_t world_size,
                             uint64_t batch_size) const;
  // The pre-scan's lengths for another world's cut of the same files (elastic.cc).
  Result<std::vector<std::vector<uint32_t>>> LengthsFor(
      const std::vector<StreamShard>& shards) const;
  // MakeShards, with the shards' stores added to storage_.
  Result<std::vector<StreamShard>> ExpandShards(uint64_t min_shards) const;
  uint64_t StepOf(const PlanPosition& pos) const { return pos.rows_consumed / global_rows_; }
  // The entry of (epoch, step), generating up to it. Caller holds mu_.
  Result<const Entry*> EntryLocked(uint64_t epoch, uint64_t step) const;

  std::shared_ptr<StreamContext> ctx_;
  StreamOptions options_;
  uint64_t batch_size_ = 1, global_rows_ = 1;
  std::string fingerprint_;
  std::vector<std::vector<uint32_t>> lengths_;  // pre-scan: document lengths per shard
  std::vector<std::vector<uint64_t>> offsets_;  // their byte offsets (uncompressed JSONL only)
  PrescanSummary prescan_;
  std::shared_ptr<const TokenSource> source_;
  mutable storage::MetricsSet storage_;

  mutable std::mutex mu_;
  mutable std::map<uint64_t, uint64_t> steps_cache_;
  mutable std::shared_ptr<const ElasticEpoch> elastic_;  // set by an elastic state's restore
  mutable std::map<uint64_t, Generator> gens_;           // by epoch
  mutable std::map<std::pair<uint64_t, uint64_t>, Entry> entries_;  // (epoch, step)
  mutable std::shared_mutex pieces_mu_;
  mutable std::unordered_map<uint64_t, const Entry*> by_id_;
  mutable uint64_t next_id_ = 1;
  uint64_t retention_ = 32;  // steps kept per epoch behind the newest (> the ring)
};

// Opens a loader over the stream (the engine, ring, copier, monitor and stats of the indexed
// path). `resume`: a state from Loader::State() of the same stream and world size. `planner`, if
// given, receives the stream's planner (steps per epoch, states for a position, provenance).
Result<std::unique_ptr<Loader>> OpenStreamLoader(
    const StreamOptions& options, const LoaderOptions& loader, const PlanState* resume = nullptr,
    std::shared_ptr<const StreamPlanner>* planner = nullptr);

}  // namespace stoker::stream
