// StreamPlanner: the streaming path's planner for the loader's engine (stoker/planner.h). It
// produces one rank's rows in a fixed order from (seed, epoch, rank) and its checkpoint: shards
// dealt per epoch (shards.h), a shuffle buffer, online tokenization and packing (rank_stream.h).
// Rows are generated in step order under a lock (so the batches are the same for any num_workers);
// the documents behind them are decoded and tokenized ahead on a pool of num_workers threads
// (DocPipeline, in read order). Their tokens are served to the workers by the planner's
// DocumentReader (reader()): a row piece's document is a handle to a tokenized piece. Steps per
// epoch are equal on every rank: steps_per_epoch if given, else a pre-scan counts every shard's
// document lengths once, each epoch's documents are dealt to ranks balanced by them (deal.h), and
// the epoch takes the smallest rank's row count. Thread-safe: every
// method may be called from many threads at once (one internal lock).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "stoker/loader.h"
#include "stoker/planner.h"
#include "stoker/stream.h"
#include "storage/metering_backend.h"
#include "stream/prescan.h"
#include "stream/rank_stream.h"
#include "stream/stream_token_steps.h"

namespace stoker::stream {

// The public options (stoker/stream.h), also by their older name stream::StreamOptions.
using ::stoker::StreamOptions;

// The loader options a stream cannot honour are refused, never ignored: shuffle other than
// "global" (a stream's order is its shard dealing and shuffle buffer), block_shards other than the
// default, remainder "pad" (drop_last=False) and long_documents "truncate". kInvalidArgument naming
// the option.
Status CheckStreamLoaderOptions(const LoaderOptions& options);

class StreamPlanner final : public BatchPlanner {
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
  // The provenance of the step at `pos` (stream_provenance.cc: input file, record, line offset).
  Result<StepProvenance> Explain(const PlanPosition& pos) const override;

  uint64_t steps_per_epoch(uint64_t epoch) const;
  // Batches per rank in `epoch`: its steps, or with tokens_per_step its microbatches.
  Result<uint64_t> StepsPerEpoch(uint64_t epoch) const override;
  // Whole steps of every rank from its epoch's start less those before `pos`; with
  // tokens_per_step the microbatches left (walked: positions are step · 2^16 + microbatch).
  Result<uint64_t> BatchesRemaining(const PlanPosition& pos) const override;
  std::string Fingerprint() const override { return fingerprint_; }
  // Elastic resume (elastic.cc, docs/streaming.md): from the states of every rank of another
  // world (or batch size), all at the same step, the state that continues this rank: the epoch's
  // unread documents (open shards' tails, undealt shards, shuffle buffers, packers' leftovers)
  // dealt to this world, with equal steps for the rest of the epoch. Every rank of this world
  // gives the same `states` and gets its own share; restore it with RestorePosition.
  Result<PlanState> ElasticState(const std::vector<PlanState>& states) const override;
  // This rank's rows at the step starting at `pos`, with each piece's document reference.
  Result<std::vector<PackedRow>> RowsAt(const PlanPosition& pos) const;
  const std::vector<StreamShard>& shards() const { return ctx_->shards; }
  const std::string& fingerprint() const { return fingerprint_; }
  // What the pre-scan at Create read: files, and how many of them from scan files (`stoker scan`).
  const PrescanSummary& prescan_summary() const { return prescan_; }
  // Threads that decode and tokenize for this planner (its EncodePool; also the pre-scan's).
  int encode_threads() const { return ctx_->pool->threads(); }
  // The reader that serves the planned rows' tokens (dataset 0 of every row).
  std::shared_ptr<const DocumentReader> reader() const { return reader_; }
  // Remote record shards: every request their stores made (listings and reads), summed over the
  // expansions of the inputs this planner made (at open, and for elastic states).
  StorageStats storage_stats() const { return storage_.Total(); }

  // For reader(): the tokens of piece handle `doc`, or null if it was evicted; and, for chat data,
  // its loss mask's spans (null for text).
  Tokens PieceTokens(uint64_t doc) const { return PieceOf(doc, &Entry::pieces); }
  Tokens PieceSpans(uint64_t doc) const { return PieceOf(doc, &Entry::spans); }
  // Steps counted in tokens (LoaderOptions::tokens_per_step; stream_token_steps.h), else null.
  // A position is then (epoch, step · 2^16 + microbatch) and each batch one microbatch.
  const StreamTokenSteps* token_steps() const { return token_steps_.get(); }
  // Whether the stream reads chat records (its batches then have a loss mask).
  bool chat() const { return ctx_->config.reader.chat != nullptr; }
  // The loader's pad_each_document_to (0: none): each piece's room in its row is its length
  // padded to it.
  uint64_t pad_each_document_to() const { return ctx_->config.pad_each_document_to; }
  // The shard list that pieces of `stream_epoch` refer to (another world's after an elastic
  // resume into that epoch).
  std::shared_ptr<const std::vector<StreamShard>> ShardsOf(uint64_t stream_epoch) const;

 private:
  struct Entry {
    uint64_t id = 0;
    std::vector<PackedRow> rows;
    std::vector<Row> plan_rows;
    std::vector<Tokens> pieces;  // by handle & kPieceMask
    std::vector<Tokens> spans;   // the same, chat data only
    std::string state_before;    // RankSnapshot::Encode at the step's start
    StepFigures figures;         // steps counted in tokens only (microbatch 0)
  };
  struct Generator {
    std::unique_ptr<RankStream> stream;
    uint64_t next_step = 0;
  };
  static constexpr int kPieceBits = 28;

  StreamPlanner() = default;
  Status PreScan();
  // The fewest rows any rank's stream of `epoch` yields (from the pre-scan's lengths).
  uint64_t FewestRows(uint64_t epoch) const;
  // The fingerprint of this stream for another world size / batch size over `shards`.
  std::string FingerprintFor(const std::vector<StreamShard>& shards, uint32_t world_size,
                             uint64_t batch_size) const;
  // The options FingerprintFor covers, in clear ("seq_len=2048 seed=0 ... world_size=8"), as a
  // state's `options` holds them: what a refused resume names. The rows' text (OptionsText of
  // the plan's rows it deals by and StreamOptionTable()'s InState rows), then the tokenizer's,
  // chat template's and text field's identities.
  std::string OptionsText(uint32_t world_size, uint64_t batch_size) const;
  // The pre-scan for another world's cut of the same files (elastic.cc).
  Result<ShardScan> ScanFor(const std::vector<StreamShard>& shards) const;
  // MakeShards, with the shards' stores added to storage_.
  Result<std::vector<StreamShard>> ExpandShards(uint64_t min_shards) const;
  uint64_t StepOf(const PlanPosition& pos) const { return pos.rows_consumed / global_rows_; }
  // A state at `pos` naming this stream (fingerprint, world size, batch size); no stream section.
  PlanState BaseState(const PlanPosition& pos) const;
  // Piece handle `doc` in its entry's `field` (pieces or spans), or null if evicted or unknown.
  Tokens PieceOf(uint64_t doc, std::vector<Tokens> Entry::*field) const;
  // The entry of (epoch, step), generating up to it. Caller holds mu_.
  Result<const Entry*> EntryLocked(uint64_t epoch, uint64_t step) const;

  std::shared_ptr<StreamContext> ctx_;
  std::shared_ptr<const StreamTokenSteps> token_steps_;
  StreamOptions options_;
  uint64_t batch_size_ = 1, global_rows_ = 1;
  uint64_t loader_batch_size_ = 1;  // what the fingerprint names (token steps: batch_size_ is 1)
  std::string fingerprint_;
  std::string options_text_;  // OptionsText of this world, made once: every state carries it
  PrescanSummary prescan_;
  std::shared_ptr<const DocumentReader> reader_;
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

}  // namespace stoker::stream
