// Loader: turns the plan into batches in memory — the C++ counterpart of torch's DataLoader.
//
// Worker threads read the pieces of each planned row from the token sources straight into a fixed
// ring of (pinned, when CUDA is present) host slots; batches leave in plan order whatever order the
// workers finish in, so the output is byte-identical for any num_workers. With a CUDA device, a
// copier thread moves each batch to device memory on its own stream ahead of the consumer. See
// docs/loader.md. Thread-safe for Stats(); Next/State/Restore: one consumer thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stoker/error_policy.h"
#include "stoker/plan.h"
#include "stoker/planner.h"
#include "stoker/provenance.h"
#include "stoker/status.h"
#include "stoker/storage_stats.h"
#include "stoker/token_source.h"

namespace stoker {

// Options keep torch DataLoader's names and meanings where one exists. The plan's options
// (seq_len, batch_size, world_size, rank, seed, shuffle, block_shards, pack, bestfit_window and
// remainder, torch's drop_last) are PlanOptions itself: one definition, with the loader's default
// batch_size of 8 rows per rank per step. Each field is declared once, as a row of
// LoaderOptionTable() (src/loader/loader_options_table.cc), from which the CLI flags and the
// Python keywords are derived; a test fails on a field without a row.
struct LoaderOptions : PlanOptions {
  LoaderOptions() { batch_size = 8; }
  int num_workers = 0;             // threads; 0 = cores / LOCAL_WORLD_SIZE (env), at least 1
  bool pin_memory = true;          // page-locked ring when a CUDA device is usable
  int prefetch_factor = 2;         // batches in flight per worker; ring = this * workers + 1
  bool persistent_workers = true;  // threads live across epochs (and prefetch into the next one)
  int device = -1;                 // CUDA device index for device batches; -1 = host batches only
  int device_buffers = 2;          // device copies in flight (2 = double, 3 = triple buffering)
  TokenDType token_dtype = TokenDType::kInt64;  // kInt32 or kInt64, for every [B, S] tensor
  bool cross_document_targets = false;  // label of a document's last token = next document's first
  bool attention_mask = false;          // also build a dense causal block-diagonal mask [B, S, S]
  // position_ids and segment_ids [B, S] are built unless turned off: a model that needs neither
  // (no document masking, positions 0..S-1) then gets half the bytes per token at int64, in the
  // ring and over PCIe. The mask needs segment_ids.
  bool position_ids = true;
  bool segment_ids = true;
  // Also build seq_idx, int32 [B, S]: each token's index among the batch's cu_seqlens segments
  // (row-major over the flattened batch, padding runs included: nondecreasing), as Mamba and
  // linear-attention varlen kernels take it.
  bool seq_idx = false;
  // Context parallelism (docs/loader.md, "Context parallelism"; Python context_parallel=(size,
  // rank)): with cp_size > 1 every [B, S] tensor holds only cp_rank's share of each segment,
  // [B, S / cp_size], with matching positions, labels and masks; cu_seqlens, cu_seqlens_padded and
  // max_seqlen stay those of the whole rows (as TransformerEngine takes them), and so do the
  // batch's token counts. cp_layout "zigzag": chunks r and 2cp-1-r of 2cp equal chunks of each
  // segment (TE, Megatron), needs pad_each_document_to a multiple of 2 * cp_size; "contiguous":
  // chunk r of cp, needs it a multiple of cp_size. Every CP rank of a DP rank computes the same
  // rows, so they agree without communicating.
  uint32_t cp_size = 1;
  uint32_t cp_rank = 0;
  std::string cp_layout = "zigzag";
  // FlexAttention (docs/loader.md, "FlexAttention"; Python flex_block_mask=(block_size, kind[,
  // window])): with flex_block_size > 0 every batch also carries the block tables of its document
  // mask (loader/flex_block_mask.h), built by the workers, so a trainer makes the BlockMask with
  // no create_block_mask. flex_mask_kind "causal" or "sliding_window" (with flex_window tokens).
  uint32_t flex_block_size = 0;
  std::string flex_mask_kind = "causal";
  uint32_t flex_window = 0;
  ErrorPolicy on_error = ErrorPolicy::kFail;
  // Documents longer than seq_len: kAuto drops them for chat data (a conversation's answer
  // must not arrive without its question; docs/chat.md) and splits them for text.
  LongDocuments long_documents = LongDocuments::kAuto;
  int64_t pad_token_id = 0;  // input_ids value at padding positions
  // The live stall monitor (see docs/diagnostics.md) always measures; these say where its
  // warnings go: at most one line per 5 minutes, to `monitor_sink` if set (called on the thread
  // inside Next()), else to stderr; monitor_warnings = false silences them (still counted).
  bool monitor_warnings = true;
  std::function<void(const std::string&)> monitor_sink;
  // Remote datasets (s3://, http(s)://) read through a node-local disk cache in this directory
  // (shared by the ranks of a node), with look-ahead in plan order. "auto" (the default): the
  // shards/ directory of the cache root ($STOKER_CACHE_DIR, else $XDG_CACHE_HOME/stoker, else
  // /tmp/stoker-cache-<uid>; none when $STOKER_CACHE_DIR is "off"; docs/cache.md); empty: no
  // cache (shards are read by ranged GETs); anything else: the shard cache's directory itself.
  // Local datasets never use it. cache_size_bytes: the cache's budget (0: its stated default,
  // 64 GiB or half the free disk, whichever is smaller).
  std::string cache_dir = "auto";
  uint64_t cache_size_bytes = 0;
};

// One dataset of a mixture: a path for OpenTokenSource, or an already open source.
struct LoaderDataset {
  std::string path;
  std::shared_ptr<const TokenSource> source;  // used when set; `path` is then only a label
  double weight = 1.0;
};

// A 2-D (or 3-D for the mask) view of batch memory, host or device, valid while its batch lives.
struct TensorView {
  void* data = nullptr;
  TokenDType dtype = TokenDType::kInt64;  // kInt32, kInt64, or kUint8 (mask)
  int64_t shape[3] = {0, 0, 0};
  int ndim = 0;
  int device = -1;  // -1 = host memory
};

class Loader;
namespace loader {
class BatchOwner;
struct BatchLayout;
}  // namespace loader

// One dataset's share of a delivered batch (stoker.metrics sums them): its real tokens, the
// positions among them whose label is trained (a cross-document target counts for the document
// whose last position it is), the documents begun (pieces at offset 0) and the pieces.
struct SourceCount {
  uint64_t tokens = 0, trained_tokens = 0, documents = 0, pieces = 0;
};

// One delivered batch. Owns a ring slot (and, with a device, a device buffer) until destroyed or
// Release()d; every view is valid until then. May outlive the Loader (the memory is kept alive).
// Not thread-safe: one user at a time.
class LoaderBatch {
 public:
  LoaderBatch() = default;
  LoaderBatch(LoaderBatch&& other) noexcept;
  LoaderBatch& operator=(LoaderBatch&& other) noexcept;
  LoaderBatch(const LoaderBatch&) = delete;
  LoaderBatch& operator=(const LoaderBatch&) = delete;
  ~LoaderBatch();

  uint64_t epoch() const { return epoch_; }
  uint64_t step() const { return step_; }
  // The checkpoint that resumes right after this batch: made when first asked for, since its
  // fingerprint may cost a pass over a new input's lengths (docs/plan.md, "Scale").
  const PlanState& state_after() const;
  // Its position (free: no fingerprint).
  const PlanPosition& position_after() const { return position_after_; }
  uint64_t batch_size() const { return batch_size_; }
  uint64_t seq_len() const { return seq_len_; }
  int max_seqlen() const { return max_seqlen_; }
  uint64_t real_tokens() const { return real_tokens_; }        // non-padding positions
  uint64_t trained_tokens() const { return trained_tokens_; }  // labels that are not -100
  uint64_t skipped_documents() const { return skipped_documents_; }
  // Per dataset (by index; datasets after the last one in the batch are absent).
  const std::vector<SourceCount>& source_counts() const { return source_counts_; }
  // Steps counted in tokens (LoaderOptions::tokens_per_step): the figures of the step this
  // microbatch belongs to (stoker/plan.h, StepFigures); nullopt otherwise.
  const std::optional<StepFigures>& step_figures() const { return step_figures_; }

  // Host tensors (in the ring slot): [B, S] in the token dtype.
  TensorView input_ids() const { return View(0, false); }
  TensorView labels() const { return View(1, false); }
  TensorView position_ids() const { return View(2, false); }    // null if not built
  TensorView segment_ids() const { return View(3, false); }     // null if not built
  TensorView cu_seqlens() const { return View(4, false); }      // int32 [segments + 1]
  TensorView attention_mask() const { return View(5, false); }  // uint8 [B, S, S]; null if off
  // Chat data only (docs/chat.md, "Batches"): 1 where labels[t] is trained, [B, S] in the token
  // dtype; null for datasets without a loss mask.
  TensorView loss_mask() const { return View(6, false); }
  TensorView seq_idx() const { return View(7, false); }  // int32 [B, S]; null unless asked
  // With pad_each_document_to > 1: int32, as many entries as cu_seqlens, each segment's offset in
  // the flattened batch (cu_seqlens then holds the real lengths' offsets); null otherwise.
  TensorView cu_seqlens_padded() const { return View(8, false); }
  // With flex_block_size > 0: int32 [FlexTableShape::total_elements()], the eight FlexAttention
  // block tables one after the other (loader/flex_block_mask.h, FlexBlockTables::Slice).
  TensorView flex_block_tables() const { return View(9, false); }
  // The same tensors on the device, when the loader has one (data == nullptr otherwise).
  TensorView device_input_ids() const { return View(0, true); }
  TensorView device_labels() const { return View(1, true); }
  TensorView device_position_ids() const { return View(2, true); }
  TensorView device_segment_ids() const { return View(3, true); }
  TensorView device_cu_seqlens() const { return View(4, true); }
  TensorView device_attention_mask() const { return View(5, true); }
  TensorView device_loss_mask() const { return View(6, true); }
  TensorView device_seq_idx() const { return View(7, true); }
  TensorView device_cu_seqlens_padded() const { return View(8, true); }
  TensorView device_flex_block_tables() const { return View(9, true); }
  bool on_device() const { return device_base_ != nullptr; }

  // Makes `cuda_stream` (a cudaStream_t; nullptr = legacy default stream) wait, on the GPU, for
  // this batch's copy — never for later batches. Also remembers the stream: on release, the
  // device buffer is reused only after the work queued on it so far has finished, so the stream
  // must outlive the batch (release the batch before destroying the stream).
  // OK and no-op for host batches.
  Status WaitOnStream(void* cuda_stream);
  // Blocks until this batch's device copy has finished (OK for host batches).
  Status Synchronize();

  // Returns the slot to the ring now; the views become invalid.
  void Release();
  bool valid() const { return owner_ != nullptr; }

 private:
  friend class Loader;
  TensorView View(int which, bool device) const;

  std::shared_ptr<loader::BatchOwner> owner_;  // the engine; keeps the ring alive
  int slot_ = -1;
  int device_buffer_ = -1;
  void* consumer_stream_ = nullptr;
  bool stream_set_ = false;
  uint8_t* host_base_ = nullptr;
  uint8_t* device_base_ = nullptr;
  int device_ = -1;
  const loader::BatchLayout* layout_ = nullptr;  // owned by owner_
  uint64_t epoch_ = 0, step_ = 0, batch_size_ = 0, seq_len_ = 0;
  int max_seqlen_ = 0, num_cu_seqlens_ = 0;
  uint64_t real_tokens_ = 0, trained_tokens_ = 0, skipped_documents_ = 0;
  std::vector<SourceCount> source_counts_;
  std::optional<StepFigures> step_figures_;
  TokenDType dtype_ = TokenDType::kInt64;
  PlanPosition position_after_;
  std::shared_ptr<const BatchPlanner> planner_;  // makes state_after_ when asked for
  mutable std::optional<PlanState> state_after_;
};

// Counters since Open (or the last Restore). Times are totals over all threads.
struct LoaderStats {
  uint64_t batches = 0;         // delivered to the consumer
  uint64_t samples = 0;         // rows delivered
  uint64_t tokens = 0;          // positions delivered (batch_size * seq_len each)
  uint64_t real_tokens = 0;     // non-padding positions delivered
  uint64_t trained_tokens = 0;  // labels delivered that are not -100
  // Documents longer than seq_len that LoaderOptions::long_documents left out of the plan (with
  // truncated chat documents left with no trained token), and those truncated to their head.
  uint64_t long_documents_dropped = 0, long_documents_truncated = 0;
  uint64_t skipped_documents = 0;  // pieces blanked by ErrorPolicy::kSkip
  double elapsed_s = 0;            // since the loader started producing
  double tokens_per_s = 0;         // delivered positions / elapsed
  double samples_per_s = 0;
  double wait_last_ms = 0;   // the consumer's wait inside Next() for the last batch
  double wait_total_ms = 0;  // the data stall, summed
  double wait_max_ms = 0;
  double read_s = 0;      // time inside TokenSource reads
  double assemble_s = 0;  // plan lookup + building rows, beside reads
  double copy_s = 0;      // host-to-device copies (GPU time)
  int num_workers = 0;
  int ring_slots = 0;
  int slots_ready = 0;          // filled, not yet delivered (queue occupancy)
  int slots_in_use = 0;         // held by workers, ready or by the consumer
  double mean_slots_ready = 0;  // occupancy seen by Next(), averaged over batches
  bool pinned = false;          // the ring is page-locked memory
  bool device_batches = false;  // batches are copied to a CUDA device
  // The live stall monitor, over its sliding window (the last 30 s of batches), since Open —
  // Restore does not clear it. Zero for the synthetic loader, which is not monitored.
  uint64_t monitor_batches = 0;                 // batches in the window
  double monitor_stall_share = 0;               // wait / (wait + consumer time between Next calls)
  double monitor_consumed_tokens_per_s = 0;     // what training takes when it never waits
  double monitor_deliverable_tokens_per_s = 0;  // what the pipeline could give at full parallelism
  double monitor_ratio = 0;                     // deliverable / consumed; < 1.2 warns
  uint64_t monitor_warnings = 0;                // warnings raised (printed or not) since Open
  bool monitor_warned = false;                  // monitor_warnings > 0
  // Requests to remote storage for the datasets, since they were opened (zero for local data).
  StorageStats storage;
};

// Not thread-safe: one consumer at a time, except Stats() which is thread-safe.
class Loader {
 public:
  // Opens the datasets, builds the plan and starts the workers at `resume` (or the plan's start).
  // Errors name the dataset path; kFailedPrecondition if `resume` belongs to another plan.
  static Result<std::unique_ptr<Loader>> Open(std::vector<LoaderDataset> datasets,
                                              const LoaderOptions& options,
                                              const PlanState* resume = nullptr);
  // The "remove the data pipeline" experiment: one fixed batch of batch_size x seq_len tokens
  // (pseudo-random ids from `seed`, documents of random lengths), served forever by Next().
  static Result<std::unique_ptr<Loader>> OpenSynthetic(const LoaderOptions& options);
  // The engine over any planner (stoker/planner.h): rows from `planner`, their tokens from
  // `readers[piece.dataset]`; starts at `resume` (planner->RestorePosition) or at epoch 0.
  // Loader::Open is this over a Plan; OpenStreamLoader (stoker/stream.h) over the stream.
  // plan() is then the planner's (null but for the indexed one), and State(), Restore(),
  // Explain() and the look-ahead are the planner's.
  static Result<std::unique_ptr<Loader>> OpenWithPlanner(
      std::shared_ptr<const BatchPlanner> planner,
      std::vector<std::shared_ptr<const DocumentReader>> readers, const LoaderOptions& options,
      const PlanState* resume = nullptr);

  // Cancels and joins the workers, then frees the ring once no batch holds it.
  ~Loader();

  // The next batch in plan order; nullopt once at the end of each epoch (the following call starts
  // the next epoch). After an error with ErrorPolicy::kFail, every later call returns that error.
  Result<std::optional<LoaderBatch>> Next();
  // The checkpoint resuming after the last delivered batch.
  PlanState State() const;
  // Drops every prefetched batch and continues from `state`.
  Status Restore(const PlanState& state);
  // Thread-safe.
  LoaderStats Stats() const;
  // The plan (null for the synthetic loader and other planners than the indexed one).
  const Plan* plan() const;
  // The planner the engine takes its rows from: steps per epoch, fingerprint, states for a
  // position, elastic states (stoker/planner.h). Thread-safe; lives as long as the Loader.
  const BatchPlanner& planner() const;
  // Provenance: which documents fill this rank's rows of the step that starts at `pos`
  // (normalized as Next takes it): dataset, shard, record and token range of every piece
  // (stoker/provenance.h), from the datasets this loader reads, without reading tokens: the
  // planner's Explain (an indexed plan maps its datasets' shards on the first call).
  // kUnimplemented for a planner that cannot explain its rows, and for the synthetic loader.
  // Thread-safe.
  Result<StepProvenance> Explain(const PlanPosition& pos) const;
  const LoaderOptions& options() const;

 private:
  struct Impl;  // src/loader/loader_impl.h
  explicit Loader(std::unique_ptr<Impl> impl);
  static Result<std::unique_ptr<Loader>> OpenEngine(
      std::shared_ptr<const BatchPlanner> planner,
      std::vector<std::shared_ptr<const DocumentReader>> readers, const LoaderOptions& options,
      const PlanPosition& start);

  std::unique_ptr<Impl> impl_;
};

// Checks options every loader shares (sizes, dtype, workers, mask, device buffers):
// kInvalidArgument naming the bad one.
Status ValidateLoaderOptions(const LoaderOptions& options);

// The plan options a loader with `options` uses (its PlanOptions part).
inline PlanOptions PlanOptionsFor(const LoaderOptions& options) { return options; }

// The worker count used for num_workers = 0: hardware threads / LOCAL_WORLD_SIZE, at least 1
// (the stream's encode threads default to the same).
int DefaultNumWorkers();

}  // namespace stoker
