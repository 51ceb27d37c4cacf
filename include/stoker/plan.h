// Plan: which tokens every rank trains on at every step, as a pure function of the datasets'
// document lengths and the options (seed, epoch, seq_len, shuffle, packing, world size, rank).
//
// The plan shuffles documents per epoch, packs them into rows of at most seq_len tokens from their
// lengths alone, interleaves weighted datasets, and only then deals rows to ranks: every rank
// computes the same global row stream, so token-level exactly-once, equal step counts and elastic
// resume hold by construction. No threads, no file I/O of its own: the lengths it reads may be
// mapped files (a TokenSource's Lengths()), and a WindowCounter given to Create may count in
// parallel and keep its counts in a cache. See docs/plan.md.
// Thread-safe: a Plan is immutable after Create; every method is const (caches are locked).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/dataset_lengths.h"
#include "stoker/status.h"
#include "stoker/window_counter.h"

namespace stoker {

enum class ShuffleMode : uint8_t {
  kGlobal,  // a keyed bijection over all documents, new per epoch
  kBlock,   // shard order shuffled per epoch, documents shuffled within a window of shards
  kNone,    // source order
};
enum class PackMode : uint8_t {
  kConcat,   // documents end to end, cut every seq_len tokens, no padding (GPT/Megatron)
  kBestFit,  // best-fit decreasing within windows of documents; leftover space padded
  kPad,      // one document per row, truncated to seq_len (the naive baseline)
};
// What becomes of a document longer than seq_len (docs/chat.md, "Long conversations").
enum class LongDocuments : uint8_t {
  kAuto,      // kDrop for chat data (a dataset with a loss mask), kSplit otherwise
  kSplit,     // cut into pieces across rows (pretraining text)
  kDrop,      // left out of the plan, counted
  kTruncate,  // its first seq_len tokens only (the head)
};
// How a step counted in tokens (PlanOptions::tokens_per_step) deals its documents to (rank,
// microbatch) slots (docs/plan.md, "Balanced steps").
enum class BalanceMode : uint8_t {
  kTokens,     // balanced by tokens (cost a = 1, b = c = 0)
  kAttention,  // balanced by PlanOptions::step_cost (a·L + b·L² + c: linear work plus attention)
  kNone,       // the shuffled order packed into microbatches as it comes, dealt round robin
};
enum class RemainderPolicy : uint8_t {
  kDropLast,  // drop the final incomplete global batch of an epoch
  kPad,       // complete it with rows from the start of the next epoch, flagged `repeated`
};

// Names as on the command line: "global", "block", "none"; "concat", "bestfit", "pad";
// "drop_last", "pad". Parse* fail with kInvalidArgument naming the accepted values.
std::string_view ShuffleModeName(ShuffleMode mode);
std::string_view PackModeName(PackMode mode);
std::string_view RemainderPolicyName(RemainderPolicy policy);
Result<ShuffleMode> ParseShuffleMode(std::string_view name);
Result<PackMode> ParsePackMode(std::string_view name);
Result<RemainderPolicy> ParseRemainderPolicy(std::string_view name);
// "auto", "split", "drop", "truncate".
std::string_view LongDocumentsName(LongDocuments policy);
Result<LongDocuments> ParseLongDocuments(std::string_view name);
// "tokens", "attention", "none".
std::string_view BalanceModeName(BalanceMode mode);
Result<BalanceMode> ParseBalanceMode(std::string_view name);

// The cost of training on a document of L tokens, a·L + b·L² + c (src/plan/cost_model.h; the
// loader reads a, b from a model's config.json: PlanOptions::model).
struct StepCost {
  double a = 1.0, b = 0.0, c = 0.0;
  bool operator==(const StepCost&) const = default;
};

// The documents a LongDocuments policy changed.
struct LongDocumentCounts {
  uint64_t dropped = 0;    // kDrop: documents left out
  uint64_t truncated = 0;  // kTruncate: documents cut to their head
  uint64_t untrained = 0;  // of those, chat documents left with no trained token (then dropped)
};

// `lengths` with `policy` (kDrop or kTruncate) applied to every document longer than `seq_len`:
// a dropped document gets length 0 (the plan skips empty documents, so document numbers keep
// their meaning), a truncated one seq_len. The lengths are read once and held in memory; the
// totals are recomputed. Pure: no I/O beyond reading mapped lengths.
Result<DatasetLengths> LimitLongDocuments(const DatasetLengths& lengths, LongDocuments policy,
                                          uint64_t seq_len, LongDocumentCounts* counts);

struct PlanDataset {
  std::shared_ptr<const DatasetLengths> lengths;
  double weight = 1.0;  // relative share of the mixture's rows; > 0
};

// One phase of a mixture schedule (docs/plan.md, "Schedules"): the weights of the global rows from
// the previous phase's end (row 0 for the first) up to `end_row`. Rows are global rows counted over
// all epochs (epoch * rows_in_epoch + rows_consumed), the same on every rank and world size.
struct MixturePhase {
  uint64_t end_row = UINT64_MAX;  // strictly increasing; the last phase's is UINT64_MAX
  std::vector<double> weights;    // one per dataset, >= 0, at least one > 0
  // Empty, or the weights reached at end_row: each weight ramps linearly across the phase, in
  // equal steps of at least kRampStepRows rows (at most kRampSteps steps), each at the ramp's value
  // at its midpoint. Needs a finite end_row.
  std::vector<double> end_weights;
  static constexpr uint64_t kRampSteps = 64;
  static constexpr uint64_t kRampStepRows = 256;
  bool operator==(const MixturePhase&) const = default;
};

struct PlanOptions {
  uint64_t seq_len = 2048;  // tokens per row (the row's own input tokens)
  uint64_t batch_size = 1;  // rows per rank per step
  uint32_t world_size = 1;  // >= 1
  uint32_t rank = 0;        // default rank for the calls that take none; < world_size
  uint64_t seed = 0;
  ShuffleMode shuffle = ShuffleMode::kGlobal;
  uint64_t block_shards = 4;  // kBlock: shards whose documents are shuffled together
  PackMode pack = PackMode::kConcat;
  uint64_t bestfit_window = 4096;  // kBestFit: documents packed together
  RemainderPolicy remainder = RemainderPolicy::kDropLast;
  // > 1: every document piece in a row is padded to a multiple of this many tokens (2 * cp for
  // context parallelism, or a kernel tile), and the packing counts the padded lengths, so a row
  // never overflows. Needs pack bestfit or pad and a seq_len that is a multiple of it. 0 or 1:
  // no padding. In the fingerprint (when > 1): a checkpoint of another value is refused.
  uint64_t pad_each_document_to = 0;
  // > 0: a row holds at most this many document pieces (bestfit closes a row that has them; pad
  // holds one), so the loader's cu_seqlens has a fixed capacity for CUDA graphs. Needs pack bestfit
  // or pad. 0: no limit. In the fingerprint (when > 0).
  uint64_t max_documents_per_row = 0;
  // With several datasets: the mixture's weights as a function of the global row. Empty: the
  // datasets' own weights for every row.
  std::vector<MixturePhase> phases;
  // With several datasets: the run's length in global rows (a mixture file's total_tokens /
  // seq_len or total_steps * global batch; 0: not given). A mixture's epoch is then the run
  // (docs/plan.md, "Mixtures"); otherwise one pass over every dataset. Not in the fingerprint.
  uint64_t run_rows = 0;
  // With several datasets: the names a mixture's checkpoint records for them (a mixture file's
  // names; the loader gives local paths made absolute); empty: each DatasetLengths::name. A resume
  // into an edited mixture matches datasets by these names, then by identity. Not in the
  // fingerprint.
  std::vector<std::string> dataset_names;
  // Steps counted in tokens (docs/plan.md, "Balanced steps"; one dataset). > 0: a step is a window
  // of the epoch's shuffled documents holding at least this many tokens (all ranks together),
  // dealt to every rank as the same number of microbatches (at least `microbatches`), each one
  // row of max_tokens_per_microbatch tokens (0: seq_len), balanced as `balance` says; batch_size
  // is then 1 (one microbatch per batch). In the fingerprint (when > 0) with the four below.
  uint64_t tokens_per_step = 0;
  uint64_t microbatches = 1;  // the least microbatches per rank per step
  uint64_t max_tokens_per_microbatch = 0;
  BalanceMode balance = BalanceMode::kTokens;
  // With tokens_per_step: a batch-size schedule (docs/plan.md, "Balanced steps"), as a mixture
  // file's "tokens_per_step" key resolves it: "TOKENS[..TOKENS]@END_ROW,...,TOKENS" over the
  // global rows of the token steps' row plan (src/plan/step_budget.h). Each step's budget is its
  // value at the step's first row, in place of tokens_per_step. Empty: none. In the fingerprint.
  std::string tokens_per_step_schedule;
  // balance=attention: a model directory or its config.json (a, b from its shape), or "a,b" /
  // "a,b,c" numbers; the loader and the CLI resolve it into step_cost (the plan reads no file).
  std::string model;
  StepCost step_cost;
};

// `length` rounded up to a multiple of `multiple` (PlanOptions::pad_each_document_to; 0 or 1:
// `length` itself): the room a document piece takes in a row.
inline uint64_t PaddedLength(uint64_t length, uint64_t multiple) {
  return multiple > 1 ? (length + multiple - 1) / multiple * multiple : length;
}

// A run of tokens of one document placed in a row.
struct RowPiece {
  uint32_t dataset = 0;   // index into the datasets given to Plan::Create
  uint64_t document = 0;  // document index within that dataset (source order)
  uint64_t offset = 0;    // first token within the document
  uint64_t length = 0;    // tokens; > 0
  bool operator==(const RowPiece&) const = default;
};

// One packed row: pieces in order; sum of lengths <= seq_len (the rest is padding).
struct Row {
  std::vector<RowPiece> pieces;
  // True for rows that remainder=pad took from the next epoch to complete the last global batch:
  // they are trained on twice, so counters should not count them here.
  bool repeated = false;
  uint64_t num_tokens() const;
  bool operator==(const Row&) const = default;
};

// A position in the global row stream: the epoch, and global rows of it already consumed by all
// ranks together. Independent of world size and batch split, hence elastic.
struct PlanPosition {
  uint64_t epoch = 0;
  uint64_t rows_consumed = 0;
  bool operator==(const PlanPosition&) const = default;
};

// One rank's rows for one step.
// Steps counted in tokens: the figures of the step a microbatch belongs to (docs/plan.md,
// "Balanced steps"), the same on every rank but the rank's own sums.
struct StepFigures {
  uint64_t global_tokens = 0;          // real tokens of the step over all ranks
  uint64_t global_trained_tokens = 0;  // trained targets (labels not -100) over all ranks
  uint64_t step_tokens = 0;            // Σ L over this rank's microbatches of the step
  uint64_t step_sum_l2 = 0;            // Σ L² over them (L: each document piece's length)
  double step_imbalance = 1.0;         // predicted max / mean over ranks of the step's cost
  uint64_t step_budget = 0;            // the step's token budget (a schedule's value, or fixed)
  uint32_t microbatch = 0;             // this batch's index in the step
  uint32_t microbatches = 0;           // microbatches per rank in the step
  // False where global_trained_tokens is not known to a rank (a chat stream: the pre-scan keeps
  // no loss mask, docs/streaming.md "Steps counted in tokens"); it is then 0.
  bool global_trained_known = true;
  bool operator==(const StepFigures&) const = default;
};

// One rank's rows for one step.
struct Batch {
  PlanPosition position;  // where the step starts (global rows, all ranks)
  uint64_t step = 0;      // position.rows_consumed / (batch_size * world_size)
  uint32_t rank = 0;
  std::vector<Row> rows;               // exactly batch_size rows
  std::optional<StepFigures> figures;  // steps counted in tokens only
};

// Where one dataset of a mixture stands in its own endless row stream (docs/plan.md, "Edits on
// resume"), with what identifies it: a resume with an edited mixture continues it there.
struct DatasetCursor {
  std::string name;        // its name (the path it was opened by)
  std::string id;          // 16 hex digits over its document count, lengths and shard boundaries
  uint64_t documents = 0;  // its document count then (a dataset may grow by appended shards)
  uint64_t shards = 0;     // its shard count then
  uint64_t key = 0;        // the index its shuffle is keyed by (its index when first planned)
  uint64_t epoch = 0;      // its own epoch ...
  uint64_t row = 0;        // ... and the rows of that epoch it had given
  bool operator==(const DatasetCursor&) const = default;
};

// A plan continued after an edit: from global row `row` on, each dataset starts at its cursor.
// `dormant`: datasets of earlier plans that are not in this one, kept so that adding one back
// continues it where it stopped.
struct MixtureOrigin {
  uint64_t row = 0;
  std::vector<DatasetCursor> datasets;  // in plan order
  std::vector<DatasetCursor> dormant;
  bool operator==(const MixtureOrigin&) const = default;
};

// Steps skipped on resume (`stoker resume-edit --skip-steps`, docs/plan.md "Skipping steps on
// resume"): global rows [from, to) of `epoch` (with `unit` "token_steps": token step indices
// [from, to) instead). `steps`, `world_size` and `batch_size` say how the writer counted them.
struct SkipRange {
  uint64_t epoch = 0;
  uint64_t from = 0;
  uint64_t to = 0;
  std::string steps;  // "FIRST..LAST" as the edit named them; may be empty
  uint32_t world_size = 0;
  uint64_t batch_size = 0;
  std::string unit;  // empty: global rows; "token_steps": step indices
  bool operator==(const SkipRange&) const = default;
};

// A checkpoint: a few integers and a fingerprint. Plain value.
struct PlanState {
  static constexpr int kVersion = 1;
  int version = kVersion;
  PlanPosition position;
  std::string fingerprint;  // Plan::fingerprint() of the plan that wrote it
  // Informational (not checked on restore): the writer's world size and batch size.
  uint32_t world_size = 0;
  uint64_t batch_size = 0;
  // The streaming planner's own state (src/stream/: shard positions, shuffle-buffer references,
  // RNG, packer leftover); empty for a Plan. Checked by the planner that reads it.
  std::string stream;
  // Mixtures only (empty for one dataset and for states written before edits on resume): what a
  // resume with an edited mixture needs (Plan::ContinueFrom). `global_row` is the position in
  // global rows (epoch * rows per epoch + rows_consumed), `datasets` each dataset's cursor there,
  // `stream_options` a hash of the options that shape every dataset's rows (seq_len, seed,
  // shuffle, pack), and `origin` the origin of the plan that wrote it, if it was continued.
  uint64_t global_row = 0;
  std::vector<DatasetCursor> datasets;
  std::string stream_options;
  std::optional<MixtureOrigin> origin;
  // Mixtures only: the options that shape every row, in clear ("seq_len=2048 seed=0
  // shuffle=global pack=bestfit bestfit_window=4096"; empty in states written before it), so
  // that a resume with other options can say which differ. Not checked by itself: the
  // fingerprint is.
  std::string options;
  // Documents quarantined from the resume on (`stoker resume-edit --skip-documents`; ids as
  // `stoker trace` prints them, DATASET:SHARD:RECORD): a loader opened at this state leaves their
  // pieces out of its rows and writes them into every later state. Empty: none.
  std::vector<std::string> skip_documents;
  // Steps skipped on resume (JSON "skip", sorted by (epoch, from)): a planner opened or restored
  // at this state serves none of their rows (PlanBatchPlanner: a step of another world size that
  // reaches into one serves its rows before it and padding after) and writes the ones not yet
  // passed into every later state. Empty: none.
  std::vector<SkipRange> skips;
  // Mixture datasets left out from this state on (`stoker resume-edit --drop-source`; JSON
  // "drop"), by the names the state's cursors give them; written into every later state.
  std::vector<std::string> drops;

  // One line of JSON; see docs/checkpoint-format.md.
  std::string ToJson() const;
  // kInvalidArgument for malformed text, kFailedPrecondition for an unsupported version.
  static Result<PlanState> FromJson(std::string_view text);
};

// Packing figures over one epoch. Shares are of row capacity (rows * seq_len).
struct PackingStats {
  uint64_t rows = 0;
  uint64_t real_tokens = 0;       // tokens placed in rows
  uint64_t padding_tokens = 0;    // rows * seq_len - real_tokens
  uint64_t truncated_tokens = 0;  // tokens dropped by pack=pad
  uint64_t documents = 0;         // non-empty documents packed
  uint64_t empty_documents = 0;
  uint64_t documents_split = 0;  // documents spread over more than one row
  double real_token_share() const;
  double padding_share() const;
};

// How local a shuffle is, over one epoch of one dataset (documents in planned order).
struct ShuffleStats {
  double mean_source_distance = 0;    // mean |doc[i+1] - doc[i]| in source document indexes
  double mean_shards_per_window = 0;  // distinct shards per window of 1,000 documents
  uint64_t documents = 0;
};

class Plan {
 public:
  // Validates the options (seq_len, batch_size, world_size >= 1, rank < world_size, weights > 0,
  // shard boundaries consistent, at least one token) and returns a plan. kInvalidArgument on error.
  // `counter` counts a whole epoch's best-fit windows when the plan needs them all (a resume far
  // into an epoch): null counts them on the calling thread (the pure plan: no threads, no files);
  // the loader, the CLI and Python pass SharedWindowCounter() (stoker/window_counter.h).
  static Result<std::unique_ptr<Plan>> Create(
      std::vector<PlanDataset> datasets, const PlanOptions& options,
      std::shared_ptr<const WindowCounter> counter = nullptr);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  const PlanOptions& options() const;
  size_t num_datasets() const;
  // 16 lowercase hex digits over the datasets (counts and a hash of lengths and shard boundaries),
  // weights, seq_len, seed, shuffle and pack options. Not world size, batch size or remainder.
  const std::string& fingerprint() const;
  uint64_t global_batch_rows() const;  // batch_size * world_size

  // Global rows in `epoch` before the remainder policy. Constant for concat and pad; for bestfit
  // it depends on the epoch's order (the first call for an epoch packs it; later calls are cached).
  // With several datasets, a mixture epoch has a fixed row count, in whole global batches (rounded
  // down under drop_last, up under pad), so the remainder policy drops or repeats nothing there:
  // every dataset's stream simply continues (see docs/plan.md, "Mixtures").
  uint64_t rows_in_epoch(uint64_t epoch) const;
  // Steps of `epoch` started from its first row: floor (drop_last) or ceil (pad) of rows / global
  // batch. Identical on every rank.
  uint64_t steps_per_epoch(uint64_t epoch = 0) const;
  // Steps left in pos.epoch from `pos` (elastic resume may start mid-batch).
  uint64_t steps_remaining(const PlanPosition& pos) const;
  // steps_remaining(pos) > 0, answered without packing a whole bestfit epoch unless `pos` is
  // within a few global batches of the epoch's end.
  bool HasStep(const PlanPosition& pos) const;

  // Global row `row` of `epoch`. kOutOfRange if row >= rows_in_epoch(epoch).
  Result<Row> GetRow(uint64_t epoch, uint64_t row) const;
  // Global rows [first, first + count) of `epoch`, appended to *out. kOutOfRange past the end.
  Status GetRows(uint64_t epoch, uint64_t first, uint64_t count, std::vector<Row>* out) const;

  // The batch of `rank` at `step` of `epoch`, steps counted from the epoch's first row.
  // kOutOfRange if step >= steps_per_epoch(epoch); kInvalidArgument if rank >= world_size.
  Result<Batch> GetBatch(uint64_t epoch, uint64_t step, uint32_t rank) const;
  // The batch of `rank` for the step that starts at `pos` (any rows_consumed, for elastic resume).
  // kOutOfRange if steps_remaining(pos) == 0.
  Result<Batch> GetBatchAt(const PlanPosition& pos, uint32_t rank) const;
  // The position after one global step from `pos`; moves to the next epoch's row 0 when the epoch
  // has no further step. Every rank computes the same result.
  PlanPosition Advance(const PlanPosition& pos) const;
  // The first position of `epoch` from which a step can be taken (skips epochs with no step, up
  // to a bound); the position itself when steps_remaining(pos) > 0.
  PlanPosition Normalize(const PlanPosition& pos) const;

  PlanState MakeState(const PlanPosition& pos) const;
  // The position stored in `state`. kFailedPrecondition if its version is unsupported or its
  // fingerprint differs from this plan's, unless `force`. Works with any world size / batch size:
  // a mixture's state resumes at its global row (the epochs of a mixture are whole global batches,
  // so their rows depend on the global batch and the run's length).
  Result<PlanPosition> Restore(const PlanState& state, bool force = false) const;

  // A checkpoint of another plan of the same datasets (mixtures) or of an edited mixture: the plan
  // that continues it and the position to continue from (docs/plan.md, "Edits on resume"). A state
  // of this very plan, or of a plan continued from the same origin with the same datasets and
  // options, continues exactly; otherwise every dataset continues its own order where the state
  // says it stopped (added datasets start at 0; removed ones are kept as dormant cursors). Refused
  // (kFailedPrecondition, saying what and why) when a dataset's existing documents or shards
  // changed (appended shards are fine), when seq_len, seed, shuffle or pack changed, or when the
  // state has no cursors (written by a single-dataset plan whose dataset is not among these, or
  // before edits were supported).
  struct Continued {
    std::unique_ptr<Plan> plan;
    PlanPosition position;
    std::string summary;  // one line per dataset: continued, grown, added, dormant
  };
  Result<Continued> ContinueFrom(const PlanState& state) const;

  // Epochs of each dataset consumed before `pos` (fractional: e + rows / rows_in_that_epoch).
  // For one dataset this is the plan epoch; in a mixture small datasets repeat (> 1 per epoch).
  std::vector<double> DatasetEpochs(const PlanPosition& pos) const;
  // Rows each dataset gave to the global rows before `pos`: its position in its own endless row
  // stream (its epoch 0's rows, then epoch 1's, ...).
  std::vector<uint64_t> DatasetRowsBefore(const PlanPosition& pos) const;
  // The index into options().phases of the phase holding global row `pos` (0 without phases).
  size_t PhaseAt(const PlanPosition& pos) const;
  // The epoch of its own dataset's order that global row `row` of `epoch` comes from (the plan
  // epoch for one dataset).
  uint64_t DatasetEpochOfRow(uint64_t epoch, uint64_t row) const;

  // Packing figures over `epoch` of every dataset (each dataset's own epoch `epoch`).
  PackingStats ComputePackingStats(uint64_t epoch) const;
  // Shuffle locality of `dataset`'s document order in its epoch `epoch`.
  ShuffleStats ComputeShuffleStats(uint32_t dataset, uint64_t epoch) const;

 private:
  struct Impl;
  explicit Plan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker
