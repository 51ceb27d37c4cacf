#include "stoker/plan.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>
#include <string>

#include "plan/dataset_stream.h"
#include "plan/fingerprint.h"
#include "plan/plan_impl.h"
#include "plan/schedule.h"

namespace stoker {
namespace {

// Normalize skips at most this many epochs without a step (e.g. drop_last with a dataset smaller
// than one global batch has none at all).
constexpr uint64_t kMaxEmptyEpochsSkipped = 64;

// Tokens of a dataset and how to get its non-empty documents: from its totals (the count maybe
// lazy), else one pass over the lengths for both.
std::pair<uint64_t, std::function<uint64_t()>> CountTokens(const DatasetLengths& l) {
  if (l.totals && l.totals->count_nonempty) return {l.totals->tokens, l.totals->count_nonempty};
  if (l.totals) return {l.totals->tokens, [n = l.totals->nonempty_documents] { return n; }};
  uint64_t tokens = 0, nonempty = 0;
  const uint64_t n = l.num_documents();
  for (uint64_t d = 0; d < n; ++d) {
    const uint64_t len = l.length(d);
    tokens += len;
    nonempty += len > 0;
  }
  return {tokens, [nonempty] { return nonempty; }};
}

Status ValidateDataset(size_t index, const PlanDataset& ds, uint64_t tokens, bool phases) {
  // Build checked that there are lengths.
  const std::string name = "dataset " + std::to_string(index) + " ('" + ds.lengths->name + "')";
  // With a schedule the phases' weights are used (checked by plan::Schedule).
  if (!phases && (!(ds.weight > 0) || !std::isfinite(ds.weight))) {
    return InvalidArgument(name + ": weight must be a positive number");
  }
  const auto& shards = ds.lengths->shard_first_document;
  const uint64_t n = ds.lengths->num_documents();
  if (!shards.empty()) {
    if (shards.size() < 2 || shards.front() != 0 || shards.back() != n) {
      return InvalidArgument(name + ": shard boundaries must run from 0 to the document count " +
                             std::to_string(n));
    }
    for (size_t s = 1; s < shards.size(); ++s) {
      if (shards[s] < shards[s - 1]) {
        return InvalidArgument(name + ": shard boundaries decrease at shard " + std::to_string(s));
      }
    }
  }
  if (tokens == 0) return InvalidArgument(name + ": has no tokens to plan");
  return Status::OK();
}

}  // namespace

const std::string& Plan::Impl::Fingerprint() const {
  std::call_once(fingerprint_once, [this] {
    fingerprint =
        plan::ComputeFingerprint(datasets, tokens, options, keys, origin ? &*origin : nullptr);
  });
  return fingerprint;
}

std::pair<uint64_t, uint64_t> Plan::Impl::Locate(uint32_t k, uint64_t j) const {
  if (!before_growth[k]) return streams[k]->Locate(j);
  // Epochs [0, growth_epoch] of the dataset as it was, then the full dataset's later epochs.
  uint64_t before = 0, full = 0;
  for (uint64_t e = 0; e <= growth_epoch[k]; ++e) {
    before += before_growth[k]->RowsInEpoch(e);
    full += streams[k]->RowsInEpoch(e);
  }
  if (j < before) return before_growth[k]->Locate(j);
  return streams[k]->Locate(j - before + full);
}

uint64_t Plan::Impl::FlatIndex(uint32_t k, uint64_t epoch, uint64_t row) const {
  uint64_t j = row;
  for (uint64_t e = 0; e < epoch; ++e) j += StreamFor(k, e).RowsInEpoch(e);
  return j;
}

void Plan::Impl::AppendRow(uint32_t k, uint64_t j, std::vector<Row>* out) const {
  auto [epoch, row] = Locate(k, j);
  StreamFor(k, epoch).AppendRows(epoch, row, 1, out);
}

Result<std::unique_ptr<Plan::Impl>> Plan::Impl::Build(std::vector<PlanDataset> datasets,
                                                      const PlanOptions& options,
                                                      std::shared_ptr<const WindowCounter> counter,
                                                      const MixtureOrigin* origin) {
  if (datasets.empty()) return InvalidArgument("no datasets to plan");
  if (options.seq_len == 0 || options.seq_len >= (uint64_t{1} << 32)) {
    return InvalidArgument("seq_len must be between 1 and 2^32 - 1");
  }
  if (options.batch_size == 0) return InvalidArgument("batch_size must be at least 1");
  if (options.world_size == 0) return InvalidArgument("world_size must be at least 1");
  if (options.rank >= options.world_size) {
    return InvalidArgument("rank " + std::to_string(options.rank) + " is not below world_size " +
                           std::to_string(options.world_size));
  }
  if (options.block_shards == 0) return InvalidArgument("block_shards must be at least 1");
  if (options.bestfit_window == 0) return InvalidArgument("bestfit_window must be at least 1");
  if (options.bestfit_window > (uint64_t{1} << 31)) {
    return InvalidArgument("bestfit_window must be below 2^31 documents");
  }
  STOKER_RETURN_IF_ERROR(plan::CheckDocumentPadding(options));
  if (datasets.size() == 1 && !options.phases.empty()) {
    return InvalidArgument("mixture phases need at least two datasets");
  }
  if (!options.dataset_names.empty() && options.dataset_names.size() != datasets.size()) {
    return InvalidArgument(std::to_string(options.dataset_names.size()) + " dataset names for " +
                           std::to_string(datasets.size()) + " datasets");
  }
  if (origin != nullptr && (datasets.size() < 2 || origin->datasets.size() != datasets.size())) {
    return InvalidArgument("a continued plan needs a cursor for each of at least two datasets");
  }
  auto impl = std::make_unique<Impl>();
  std::vector<std::function<uint64_t()>> nonempty;
  for (size_t i = 0; i < datasets.size(); ++i) {
    if (!datasets[i].lengths) {
      return InvalidArgument("dataset " + std::to_string(i) + ": no lengths given");
    }
    auto [tokens, nonempty_documents] = CountTokens(*datasets[i].lengths);
    impl->tokens.push_back(tokens);
    nonempty.push_back(std::move(nonempty_documents));
    STOKER_RETURN_IF_ERROR(ValidateDataset(i, datasets[i], tokens, !options.phases.empty()));
    if (datasets[i].lengths->shard_first_document.empty()) {
      // One shard: give the stream explicit boundaries so every mode can rely on them.
      auto copy = std::make_shared<DatasetLengths>(*datasets[i].lengths);
      copy->shard_first_document = {0, copy->num_documents()};
      datasets[i].lengths = std::move(copy);
    }
  }
  impl->options = options;
  impl->counter = std::move(counter);
  if (origin != nullptr) impl->origin = *origin;
  std::vector<double> weights;
  for (size_t i = 0; i < datasets.size(); ++i) {
    const uint64_t key = origin != nullptr ? origin->datasets[i].key : i;
    impl->keys.push_back(key);
    impl->streams.push_back(std::make_unique<plan::DatasetStream>(
        static_cast<uint32_t>(i), key, datasets[i].lengths, options, impl->tokens[i], nonempty[i],
        [impl = impl.get()] { return impl->Fingerprint(); }, impl->counter.get()));
    weights.push_back(datasets[i].weight);
    impl->before_growth.emplace_back();
    impl->growth_epoch.push_back(0);
    if (origin == nullptr) continue;
    const DatasetCursor& c = origin->datasets[i];
    if (c.documents == datasets[i].lengths->num_documents()) continue;
    // Grown by appended shards: its epochs up to the cursor's are the dataset as it was.
    auto before = std::make_shared<DatasetLengths>(*datasets[i].lengths);
    before->totals.reset();
    if (before->mapped.data != nullptr) {
      before->mapped.count = c.documents;
    } else {
      before->document_lengths.resize(c.documents);
    }
    before->shard_first_document.resize(c.shards + 1);
    auto [before_tokens, before_nonempty] = CountTokens(*before);
    impl->before_growth.back() = std::make_unique<plan::DatasetStream>(
        static_cast<uint32_t>(i), key, before, options, before_tokens, before_nonempty,
        [impl = impl.get()] { return impl->Fingerprint() + "-before-growth"; },
        impl->counter.get());
    impl->growth_epoch.back() = c.epoch;
  }
  impl->datasets = std::move(datasets);
  if (impl->datasets.size() > 1) {
    std::vector<uint64_t> start;
    if (origin != nullptr) {
      for (uint32_t k = 0; k < impl->datasets.size(); ++k) {
        start.push_back(impl->FlatIndex(k, origin->datasets[k].epoch, origin->datasets[k].row));
      }
    }
    STOKER_ASSIGN_OR_RETURN(
        impl->mixture,
        plan::Schedule::Create(weights, options.phases, origin != nullptr ? origin->row : 0,
                               std::move(start)));
    // One mixture epoch: the run's rows when its length is given, else as many rows as one pass
    // over every dataset would fill at least (exact for concat and pad), known without packing
    // anything; in whole global batches, so that the remainder policy neither drops a row of a
    // dataset's stream (it would be lost from that dataset's epoch) nor repeats one.
    uint64_t rows = options.run_rows;
    if (rows == 0) {
      for (const auto& st : impl->streams) rows += st->RowsLowerBound();
    }
    const uint64_t g = options.batch_size * options.world_size;
    impl->mixture_epoch_rows = options.remainder == RemainderPolicy::kDropLast
                                   ? std::max<uint64_t>(g, rows / g * g)
                                   : (rows + g - 1) / g * g;
  }
  return impl;
}

Plan::Plan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plan::~Plan() = default;

Result<std::unique_ptr<Plan>> Plan::Create(std::vector<PlanDataset> datasets,
                                           const PlanOptions& options,
                                           std::shared_ptr<const WindowCounter> counter) {
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl,
                          Impl::Build(std::move(datasets), options, std::move(counter), nullptr));
  return std::unique_ptr<Plan>(new Plan(std::move(impl)));
}

const PlanOptions& Plan::options() const { return impl_->options; }
size_t Plan::num_datasets() const { return impl_->datasets.size(); }
const std::string& Plan::fingerprint() const { return impl_->Fingerprint(); }
uint64_t Plan::global_batch_rows() const {
  return impl_->options.batch_size * impl_->options.world_size;
}

uint64_t Plan::rows_in_epoch(uint64_t epoch) const {
  return impl_->mixture ? impl_->mixture_epoch_rows : impl_->streams[0]->RowsInEpoch(epoch);
}

uint64_t Plan::steps_per_epoch(uint64_t epoch) const { return steps_remaining({epoch, 0}); }

uint64_t Plan::steps_remaining(const PlanPosition& pos) const {
  uint64_t rows = rows_in_epoch(pos.epoch);
  if (pos.rows_consumed >= rows) return 0;
  uint64_t left = rows - pos.rows_consumed;
  uint64_t g = global_batch_rows();
  return impl_->options.remainder == RemainderPolicy::kDropLast ? left / g : (left + g - 1) / g;
}

Status Plan::GetRows(uint64_t epoch, uint64_t first, uint64_t count, std::vector<Row>* out) const {
  // Within the lower bound no packing is needed to know the rows exist.
  uint64_t known = impl_->RowsLowerBound();
  uint64_t rows = first <= known && count <= known - first ? known : rows_in_epoch(epoch);
  if (first > rows || count > rows - first) {
    STOKER_RETURN_IF_ERROR(impl_->LengthsStatus());
    return OutOfRange("rows [" + std::to_string(first) + ", " + std::to_string(first + count) +
                      ") are past the end of epoch " + std::to_string(epoch) + " (" +
                      std::to_string(rows) + " rows)");
  }
  if (!impl_->mixture) {
    impl_->streams[0]->AppendRows(epoch, first, count, out);
    return impl_->LengthsStatus();
  }
  const uint64_t g = impl_->GlobalRow({epoch, first});
  if (impl_->origin && g < impl_->origin->row) {
    return FailedPrecondition("rows before global row " + std::to_string(impl_->origin->row) +
                              " are not part of this plan: it continues a checkpoint from there");
  }
  impl_->mixture->Walk(g, count, [&](uint32_t k, uint64_t j) { impl_->AppendRow(k, j, out); });
  return impl_->LengthsStatus();
}

Result<Row> Plan::GetRow(uint64_t epoch, uint64_t row) const {
  std::vector<Row> rows;
  STOKER_RETURN_IF_ERROR(GetRows(epoch, row, 1, &rows));
  return std::move(rows[0]);
}

Result<Batch> Plan::GetBatch(uint64_t epoch, uint64_t step, uint32_t rank) const {
  if (!HasStep({epoch, step * global_batch_rows()})) {
    STOKER_RETURN_IF_ERROR(impl_->LengthsStatus());
    return OutOfRange("step " + std::to_string(step) + " is past the end of epoch " +
                      std::to_string(epoch) + " (" + std::to_string(steps_per_epoch(epoch)) +
                      " steps)");
  }
  return GetBatchAt({epoch, step * global_batch_rows()}, rank);
}

Result<Batch> Plan::GetBatchAt(const PlanPosition& pos, uint32_t rank) const {
  const PlanOptions& o = impl_->options;
  if (rank >= o.world_size) {
    return InvalidArgument("rank " + std::to_string(rank) + " is not below world_size " +
                           std::to_string(o.world_size));
  }
  if (!HasStep(pos)) {
    STOKER_RETURN_IF_ERROR(impl_->LengthsStatus());
    return OutOfRange("no step left in epoch " + std::to_string(pos.epoch) + " after row " +
                      std::to_string(pos.rows_consumed) + " (" +
                      std::to_string(rows_in_epoch(pos.epoch)) + " rows, global batch " +
                      std::to_string(global_batch_rows()) + " rows, remainder " +
                      std::string(RemainderPolicyName(o.remainder)) + ")");
  }
  Batch batch;
  batch.position = pos;
  batch.step = pos.rows_consumed / global_batch_rows();
  batch.rank = rank;
  batch.rows.reserve(o.batch_size);
  // Rows past the epoch's end (remainder=pad only) come from the start of the following epochs.
  uint64_t epoch = pos.epoch;
  uint64_t index = pos.rows_consumed + rank * o.batch_size;
  uint64_t rows = index + o.batch_size <= impl_->RowsLowerBound() ? impl_->RowsLowerBound()
                                                                  : rows_in_epoch(epoch);
  while (index >= rows) {
    index -= rows;
    rows = rows_in_epoch(++epoch);
  }
  uint64_t need = o.batch_size;
  while (need > 0) {
    uint64_t take = std::min(need, rows - index);
    size_t before = batch.rows.size();
    STOKER_RETURN_IF_ERROR(GetRows(epoch, index, take, &batch.rows));
    if (epoch != pos.epoch) {
      for (size_t i = before; i < batch.rows.size(); ++i) batch.rows[i].repeated = true;
    }
    need -= take;
    if (need == 0) break;
    index = 0;
    rows = rows_in_epoch(++epoch);
  }
  return batch;
}

bool Plan::HasStep(const PlanPosition& pos) const {
  // Far from the epoch's end the lower bound answers without packing the whole epoch (bestfit).
  uint64_t known = impl_->RowsLowerBound();
  uint64_t need = impl_->options.remainder == RemainderPolicy::kDropLast ? global_batch_rows() : 1;
  if (pos.rows_consumed <= known && need <= known - pos.rows_consumed) return true;
  return steps_remaining(pos) > 0;
}

PlanPosition Plan::Advance(const PlanPosition& pos) const {
  PlanPosition next{pos.epoch, pos.rows_consumed + global_batch_rows()};
  if (!HasStep(next)) return {pos.epoch + 1, 0};
  return next;
}

PlanPosition Plan::Normalize(const PlanPosition& pos) const {
  PlanPosition p = pos;
  for (uint64_t i = 0; i < kMaxEmptyEpochsSkipped && !HasStep(p); ++i) p = {p.epoch + 1, 0};
  return HasStep(p) ? p : pos;
}

PlanState Plan::MakeState(const PlanPosition& pos) const {
  PlanState s;
  s.position = pos;
  s.fingerprint = fingerprint();
  s.world_size = impl_->options.world_size;
  s.batch_size = impl_->options.batch_size;
  // The options in clear (one short line), so that a refusal names the one that differs.
  s.options = plan::StreamOptionsText(impl_->options);
  if (impl_->mixture) impl_->FillProgress(pos, &s);
  return s;
}

Result<PlanPosition> Plan::Restore(const PlanState& state, bool force) const {
  STOKER_RETURN_IF_ERROR(plan::CheckStateVersion(state));
  if (!force && state.fingerprint != fingerprint()) {
    if (!impl_->origin &&
        state.fingerprint ==
            plan::FingerprintBeforeMixtureTree(impl_->datasets, impl_->tokens, impl_->options)) {
      return FailedPrecondition(
          "the checkpoint was written by a stoker before mixtures of three or more datasets "
          "changed how they interleave (docs/plan.md, \"Mixtures\"): its rows cannot be "
          "continued exactly; start this plan afresh, or restore with force to take its position "
          "in "
          "the new order");
    }
    PlanOptions unpadded = impl_->options;  // what a one-dataset state without options had
    unpadded.pad_each_document_to = 0;
    unpadded.max_documents_per_row = 0;
    const std::string differ =
        // A one-dataset state written before states kept their options had no padding.
        plan::OptionsThatDiffer(state.options.empty() && !impl_->mixture &&
                                        (impl_->options.pad_each_document_to > 1 ||
                                         impl_->options.max_documents_per_row > 0)
                                    ? plan::StreamOptionsText(unpadded)
                                    : state.options,
                                plan::StreamOptionsText(impl_->options));
    const char* rest = !state.options.empty() && impl_->datasets.size() == 1
                           ? "the dataset differs (its documents, lengths or shards changed, or "
                             "another dataset was given)"
                       : !state.options.empty()
                           ? "the datasets, weights or phases differ"
                           // A checkpoint from before states carried their options.
                           : "the datasets, weights, seq_len, seed, shuffle, pack or "
                             "pad_each_document_to options differ";
    return FailedPrecondition(impl_->OtherPlanError(state) + ": " +
                              (!differ.empty() ? differ + " differ" : rest));
  }
  if (impl_->mixture && !state.datasets.empty()) {
    // A mixture's epochs are whole global batches of this run: its global row is what resumes.
    const uint64_t epoch_rows = impl_->mixture_epoch_rows;
    return PlanPosition{state.global_row / epoch_rows, state.global_row % epoch_rows};
  }
  uint64_t known = impl_->RowsLowerBound();
  uint64_t rows =
      state.position.rows_consumed <= known ? known : rows_in_epoch(state.position.epoch);
  if (state.position.rows_consumed > rows) {
    if (!force) {
      return FailedPrecondition("the checkpoint has consumed " +
                                std::to_string(state.position.rows_consumed) + " rows of epoch " +
                                std::to_string(state.position.epoch) + ", which has only " +
                                std::to_string(rows));
    }
    return PlanPosition{state.position.epoch + 1, 0};
  }
  return state.position;
}

std::vector<uint64_t> Plan::DatasetRowsBefore(const PlanPosition& pos) const {
  if (!impl_->mixture) {
    uint64_t rows = pos.rows_consumed;
    for (uint64_t e = 0; e < pos.epoch; ++e) rows += rows_in_epoch(e);
    return {rows};
  }
  return impl_->mixture->CountsBefore(impl_->GlobalRow(pos));
}

size_t Plan::PhaseAt(const PlanPosition& pos) const {
  if (!impl_->mixture) return 0;
  return impl_->mixture->PhaseAt(impl_->GlobalRow(pos));
}

uint64_t Plan::DatasetEpochOfRow(uint64_t epoch, uint64_t row) const {
  if (!impl_->mixture) return epoch;
  uint64_t dataset_epoch = 0;
  impl_->mixture->Walk(impl_->GlobalRow({epoch, row}), 1,
                       [&](uint32_t k, uint64_t j) { dataset_epoch = impl_->Locate(k, j).first; });
  return dataset_epoch;
}

std::vector<double> Plan::DatasetEpochs(const PlanPosition& pos) const {
  if (!impl_->mixture) {
    return {static_cast<double>(pos.epoch) +
            static_cast<double>(pos.rows_consumed) / rows_in_epoch(pos.epoch)};
  }
  std::vector<uint64_t> counts = impl_->mixture->CountsBefore(impl_->GlobalRow(pos));
  std::vector<double> out;
  for (uint32_t k = 0; k < counts.size(); ++k) {
    auto [epoch, row] = impl_->Locate(k, counts[k]);
    out.push_back(static_cast<double>(epoch) +
                  static_cast<double>(row) / impl_->StreamFor(k, epoch).RowsInEpoch(epoch));
  }
  return out;
}

PackingStats Plan::ComputePackingStats(uint64_t epoch) const {
  PackingStats total;
  for (const auto& s : impl_->streams) {
    PackingStats st = s->ComputePackingStats(epoch);
    total.rows += st.rows;
    total.real_tokens += st.real_tokens;
    total.padding_tokens += st.padding_tokens;
    total.truncated_tokens += st.truncated_tokens;
    total.documents += st.documents;
    total.empty_documents += st.empty_documents;
    total.documents_split += st.documents_split;
  }
  return total;
}

ShuffleStats Plan::ComputeShuffleStats(uint32_t dataset, uint64_t epoch) const {
  if (dataset >= impl_->streams.size()) return {};
  return impl_->streams[dataset]->ComputeShuffleStats(epoch);
}

}  // namespace stoker
