// Plan::Impl: what a Plan holds, shared by plan.cc (rows, batches, positions) and
// plan_continue.cc (checkpoints of mixtures and their edits). Private to plan/.
// Thread-safe as Plan is: immutable after Build; lazily computed values under once_flags.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plan/dataset_stream.h"
#include "plan/document_padding.h"
#include "plan/options_text.h"
#include "plan/schedule.h"
#include "stoker/plan.h"

namespace stoker {

struct Plan::Impl {
  PlanOptions options;
  std::vector<PlanDataset> datasets;
  std::vector<std::unique_ptr<plan::DatasetStream>> streams;
  std::unique_ptr<plan::Schedule> mixture;  // only with several datasets
  uint64_t mixture_epoch_rows = 0;
  std::vector<uint64_t> tokens;                  // per dataset
  std::shared_ptr<const WindowCounter> counter;  // may be null
  std::vector<uint64_t> keys;                    // per dataset: the index its shuffle is keyed by
  // A plan continued after an edit (Plan::ContinueFrom): rows before origin->row are not served.
  std::optional<MixtureOrigin> origin;
  // A dataset grown by appended shards since the origin: its order over the documents it had, for
  // its epochs up to growth_epoch (null for the others).
  std::vector<std::unique_ptr<plan::DatasetStream>> before_growth;
  std::vector<uint64_t> growth_epoch;
  // Computed when first asked for: without a length index it hashes every length.
  mutable std::once_flag fingerprint_once;
  mutable std::string fingerprint;
  mutable std::once_flag ids_once;
  mutable std::vector<std::string> ids;

  // Validates and builds; `origin` (may be null) continues each dataset at its cursor from
  // origin->row, with origin->datasets in the order of `datasets`.
  static Result<std::unique_ptr<Impl>> Build(std::vector<PlanDataset> datasets,
                                             const PlanOptions& options,
                                             std::shared_ptr<const WindowCounter> counter,
                                             const MixtureOrigin* origin);

  const std::string& Fingerprint() const;
  // "the checkpoint was written for a different plan (fingerprint F, this plan G)": how the
  // errors for a checkpoint of another plan begin.
  std::string OtherPlanError(const PlanState& state) const {
    return "the checkpoint was written for a different plan (fingerprint " + state.fingerprint +
           ", this plan " + Fingerprint() + ")";
  }
  // Each dataset's identity (DatasetCursor::id).
  const std::vector<std::string>& DatasetIds() const;
  // The name dataset k's cursor records and is matched by: options.dataset_names[k] (a mixture
  // file's name, or the absolute path the loader gives), else its lengths' name.
  const std::string& DatasetName(size_t k) const {
    return k < options.dataset_names.size() && !options.dataset_names[k].empty()
               ? options.dataset_names[k]
               : datasets[k].lengths->name;
  }

  // OK, or the first damaged chunk of mapped lengths read so far (any dataset): once a length
  // failed its checksum, no row computed from it may be given out.
  Status LengthsStatus() const {
    for (const PlanDataset& d : datasets) STOKER_RETURN_IF_ERROR(d.lengths->status());
    return Status::OK();
  }

  // Rows every epoch has at least, known without packing (exact except for bestfit).
  uint64_t RowsLowerBound() const {
    return mixture ? mixture_epoch_rows : streams[0]->RowsLowerBound();
  }

  // Dataset k's own epochs: before its growth (if it grew), then the full dataset.
  const plan::DatasetStream& StreamFor(uint32_t k, uint64_t epoch) const {
    return before_growth[k] && epoch <= growth_epoch[k] ? *before_growth[k] : *streams[k];
  }
  // (epoch, row) of index j of dataset k's endless row stream, and back.
  std::pair<uint64_t, uint64_t> Locate(uint32_t k, uint64_t j) const;
  uint64_t FlatIndex(uint32_t k, uint64_t epoch, uint64_t row) const;
  // Appends row j of dataset k's endless stream.
  void AppendRow(uint32_t k, uint64_t j, std::vector<Row>* out) const;
  // A mixture's checkpoint: global_row, each dataset's cursor at `pos`, the stream options' hash
  // and the origin (plan_continue.cc).
  void FillProgress(const PlanPosition& pos, PlanState* state) const;
  // Global row (epoch * rows per epoch + rows consumed) of a mixture position.
  uint64_t GlobalRow(const PlanPosition& pos) const {
    return pos.epoch * mixture_epoch_rows + pos.rows_consumed;
  }
};

namespace plan {

// kFailedPrecondition for a PlanState version this stoker does not read.
inline Status CheckStateVersion(const PlanState& state) {
  if (state.version >= 1 && state.version <= PlanState::kVersion) return Status::OK();
  return FailedPrecondition("plan state version " + std::to_string(state.version) +
                            " is not supported");
}

// 16 hex digits identifying a dataset's first `documents` documents and first `shards` shards (a
// DatasetCursor::id): their count, tokens, lengths and shard boundaries. One pass over them.
std::string PrefixId(const DatasetLengths& lengths, uint64_t documents, uint64_t shards);

// 16 hex digits over what shapes every dataset's rows: seq_len, seed, shuffle (+ block_shards),
// pack (+ bestfit_window). A cursor means the same rows only under the same.
std::string StreamOptionsHash(const PlanOptions& options);

// The same options in clear, as PlanState::options holds them: "seq_len=2048 seed=0
// shuffle=global pack=bestfit bestfit_window=4096": OptionsText of PlanOptionTable()'s InState
// rows (block_shards only for block, bestfit_window only for bestfit, ...).
std::string StreamOptionsText(const PlanOptions& options);

}  // namespace plan
}  // namespace stoker
