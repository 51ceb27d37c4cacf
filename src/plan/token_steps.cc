#include "plan/token_steps.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "plan/best_fit.h"
#include "plan/document_order.h"
#include "plan/document_padding.h"
#include "plan/keyed_permutation.h"

namespace stoker::plan {
namespace {

// balance=none: the pieces in order, each microbatch filled until the next piece's room (its
// length padded to pad_each_document_to) does not fit or it holds max_documents_per_row pieces,
// rows dealt round robin (row r to rank r mod W, microbatch r / W).
SlotAssignment FillInOrder(std::span<const uint64_t> rooms, uint32_t ranks, uint64_t budget,
                           uint64_t min_microbatches, const CostModel& cost, uint64_t max_docs) {
  std::vector<std::vector<uint32_t>> rows;
  std::vector<uint64_t> row_tokens;
  for (uint32_t i = 0; i < rooms.size(); ++i) {
    if (rows.empty() || row_tokens.back() + rooms[i] > budget ||
        (max_docs > 0 && rows.back().size() >= max_docs)) {
      rows.emplace_back();
      row_tokens.push_back(0);
    }
    rows.back().push_back(i);
    row_tokens.back() += rooms[i];
  }
  SlotAssignment out;
  out.ranks = ranks;
  out.microbatches = static_cast<uint32_t>(
      std::max<uint64_t>(min_microbatches, (rows.size() + ranks - 1) / ranks));
  const size_t slots = static_cast<size_t>(ranks) * out.microbatches;
  out.slots.assign(slots, {});
  out.slot_tokens.assign(slots, 0);
  out.slot_cost.assign(slots, 0.0);
  for (size_t r = 0; r < rows.size(); ++r) {
    const size_t slot = (r % ranks) * out.microbatches + r / ranks;
    out.slots[slot] = std::move(rows[r]);
    out.slot_tokens[slot] = row_tokens[r];
    for (uint32_t i : out.slots[slot]) out.slot_cost[slot] += cost.Cost(rooms[i]);
  }
  return out;
}

// One dataset's documents in its epoch's shuffled order (the row plan's DocumentOrder, keyed as
// DatasetStream::EpochKey keys dataset 0), a document longer than the budget cut into pieces.
class DocumentStepOrder final : public StepOrder {
 public:
  DocumentStepOrder(std::shared_ptr<const DatasetLengths> lengths, const PlanOptions& options)
      : lengths_(std::move(lengths)), options_(options) {}
  Result<uint64_t> Take(uint64_t epoch, uint64_t first, uint64_t until, uint64_t budget,
                        std::vector<RowPiece>* pieces, uint64_t* tokens) const override {
    const DatasetLengths& l = *lengths_;
    const uint64_t key = DeriveKey(DeriveKey(Mix64(options_.seed), 0), epoch);
    DocumentOrder order(l.num_documents(), &l.shard_first_document, options_.shuffle,
                        options_.block_shards, key);
    uint64_t p = first;
    while (p < order.size() && *tokens < until) {
      const uint64_t doc = order.DocumentAt(p++);
      const uint64_t length = l.length(doc);
      for (uint64_t offset = 0; offset < length; offset += budget) {
        const uint64_t n = std::min(budget, length - offset);
        pieces->push_back({0, doc, offset, n});
        *tokens += n;
      }
    }
    STOKER_RETURN_IF_ERROR(l.status());
    return p;
  }
  uint64_t DocumentLength(uint32_t, uint64_t document) const override {
    return lengths_->length(document);
  }
  std::string name() const override { return "the dataset " + lengths_->name; }
  uint64_t RunPosition(uint64_t epoch, uint64_t first) const override {
    return epoch * lengths_->num_documents() + first;
  }

 private:
  std::shared_ptr<const DatasetLengths> lengths_;
  PlanOptions options_;
};

std::string TokenCostText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

std::vector<double> RankCosts(const SlotAssignment& a) {
  std::vector<double> rank(a.ranks, 0.0);
  for (size_t s = 0; s < a.slot_cost.size(); ++s) rank[s / a.microbatches] += a.slot_cost[s];
  return rank;
}

Result<CostModel> StepCostModel(const PlanOptions& options) {
  CostModel cost{1.0, 0.0, 0.0};
  if (options.balance != BalanceMode::kAttention) return cost;
  cost = CostModel{options.step_cost.a, options.step_cost.b, options.step_cost.c};
  STOKER_RETURN_IF_ERROR(ValidateCostModel(cost).WithContext("balance='attention': the cost"));
  if (cost.b == 0 && cost.c == 0) {
    return InvalidArgument(
        "balance='attention' needs a cost with an attention term: give model= (a model "
        "directory or its config.json, or numbers 'a,b'), or balance='tokens'");
  }
  return cost;
}

Result<SlotAssignment> AssignStepSlots(std::span<const uint64_t> lengths, uint32_t ranks,
                                       uint64_t budget, const CostModel& cost, BalanceMode balance,
                                       uint32_t min_microbatches, uint64_t max_documents) {
  if (balance == BalanceMode::kNone) {
    return FillInOrder(lengths, ranks, budget, min_microbatches, cost, max_documents);
  }
  return AssignSlots(lengths, ranks, budget, cost, min_microbatches, max_documents);
}

double MaxOverMean(const std::vector<double>& costs) {
  if (costs.empty()) return 1.0;
  double sum = 0, max = 0;
  for (double c : costs) {
    sum += c;
    max = std::max(max, c);
  }
  return sum > 0 ? max / (sum / static_cast<double>(costs.size())) : 1.0;
}

Row TokenStep::RowOf(uint32_t rank, uint32_t microbatch) const {
  Row row;
  if (microbatch >= slots.microbatches || rank >= slots.ranks) return row;
  for (uint32_t i : slots.slots[static_cast<size_t>(rank) * slots.microbatches + microbatch]) {
    row.pieces.push_back(pieces[i]);
  }
  return row;
}

TokenSteps::TokenSteps(std::shared_ptr<const StepOrder> order, const PlanOptions& options,
                       CostModel cost, StepBudget schedule)
    : order_(std::move(order)), options_(options), cost_(cost), schedule_(std::move(schedule)) {
  budget_ =
      options.max_tokens_per_microbatch > 0 ? options.max_tokens_per_microbatch : options.seq_len;
  options_text_ = "tokens_per_step=" + std::to_string(options.tokens_per_step) +
                  " microbatches=" + std::to_string(options.microbatches) +
                  " max_tokens_per_microbatch=" + std::to_string(budget_) +
                  " balance=" + std::string(BalanceModeName(options.balance)) +
                  " cost=" + TokenCostText(cost.a) + "," + TokenCostText(cost.b) + "," +
                  TokenCostText(cost.c) + " seed=" + std::to_string(options.seed) +
                  " shuffle=" + std::string(ShuffleModeName(options.shuffle));
  if (!schedule_.empty()) options_text_ += " tokens_per_step_schedule=" + schedule_.Text();
}

uint64_t TokenSteps::StepTokensAt(uint64_t epoch, uint64_t first) const {
  return schedule_.empty() ? options_.tokens_per_step
                           : schedule_.TokensAt(order_->RunPosition(epoch, first));
}

Result<std::unique_ptr<TokenSteps>> TokenSteps::Create(
    std::shared_ptr<const DatasetLengths> lengths, const PlanOptions& options) {
  if (lengths == nullptr) return InvalidArgument("tokens_per_step: no dataset lengths");
  if (lengths->shard_first_document.empty()) {  // one shard, as Plan::Create reads it
    auto copy = std::make_shared<DatasetLengths>(*lengths);
    copy->shard_first_document = {0, copy->num_documents()};
    lengths = std::move(copy);
  }
  return Create(std::make_shared<const DocumentStepOrder>(std::move(lengths), options), options);
}

Result<std::unique_ptr<TokenSteps>> TokenSteps::Create(std::shared_ptr<const StepOrder> order,
                                                       const PlanOptions& options,
                                                       StepBudget budget) {
  if (order == nullptr) return InvalidArgument("tokens_per_step: no order to cut into steps");
  if (options.tokens_per_step == 0) return InvalidArgument("tokens_per_step must be > 0");
  if (options.microbatches == 0 || options.microbatches >= 65536) {
    return InvalidArgument("microbatches must be in [1, 65535], got " +
                           std::to_string(options.microbatches));
  }
  if (options.world_size == 0 || options.rank >= options.world_size) {
    return InvalidArgument("rank " + std::to_string(options.rank) + " must be below world_size " +
                           std::to_string(options.world_size));
  }
  if (options.max_tokens_per_microbatch == 0 && options.seq_len == 0) {
    return InvalidArgument("max_tokens_per_microbatch (or seq_len) must be > 0");
  }
  if (options.shuffle == ShuffleMode::kBlock && options.block_shards == 0) {
    return InvalidArgument("block_shards must be >= 1");
  }
  STOKER_RETURN_IF_ERROR(CheckTokenStepPadding(options));
  STOKER_ASSIGN_OR_RETURN(CostModel cost, StepCostModel(options));
  return std::unique_ptr<TokenSteps>(
      new TokenSteps(std::move(order), options, cost, std::move(budget)));
}

Result<TokenStep> TokenSteps::StepAt(uint64_t epoch, uint64_t first, uint32_t ranks) const {
  TokenStep step;
  step.first = first;
  STOKER_ASSIGN_OR_RETURN(step.end, order_->Take(epoch, first, StepTokensAt(epoch, first), budget_,
                                                 &step.pieces, &step.tokens));
  if (step.pieces.size() >= (uint64_t{1} << 32)) {
    return InvalidArgument("tokens_per_step: a step of more than 2^32 documents");
  }
  STOKER_RETURN_IF_ERROR(Assign(&step, ranks > 0 ? ranks : options_.world_size));
  return step;
}

Result<TokenStep> TokenSteps::RemainderAt(uint64_t epoch, uint64_t first, uint32_t from_world,
                                          uint32_t from_microbatch) const {
  STOKER_ASSIGN_OR_RETURN(TokenStep old, StepAt(epoch, first, from_world));
  std::vector<bool> left(old.pieces.size(), false);
  for (size_t s = 0; s < old.slots.slots.size(); ++s) {
    if (s % old.slots.microbatches < from_microbatch) continue;
    for (uint32_t i : old.slots.slots[s]) left[i] = true;
  }
  TokenStep step;
  step.first = first;
  step.end = old.end;
  for (size_t i = 0; i < old.pieces.size(); ++i) {
    if (!left[i]) continue;
    step.pieces.push_back(old.pieces[i]);
    step.tokens += old.pieces[i].length;
  }
  STOKER_RETURN_IF_ERROR(Assign(&step, options_.world_size));
  return step;
}

Status TokenSteps::Assign(TokenStep* out, uint32_t ranks) const {
  TokenStep& step = *out;
  if (step.pieces.empty()) {
    step.slots.ranks = ranks;
    return Status::OK();
  }
  // Each piece takes its padded room (pad_each_document_to) in its microbatch; the step's
  // figures (tokens, Σ L, Σ L²) stay unpadded.
  std::vector<uint64_t> rooms(step.pieces.size());
  for (size_t i = 0; i < rooms.size(); ++i) {
    rooms[i] = PaddedLength(step.pieces[i].length, options_.pad_each_document_to);
  }
  STOKER_ASSIGN_OR_RETURN(step.slots,
                          AssignStepSlots(rooms, ranks, budget_, cost_, options_.balance,
                                          static_cast<uint32_t>(options_.microbatches),
                                          options_.max_documents_per_row));
  if (step.slots.microbatches >= 65536) {
    return InvalidArgument("tokens_per_step: a step needs " +
                           std::to_string(step.slots.microbatches) +
                           " microbatches per rank (at most 65535): lower tokens_per_step or "
                           "raise max_tokens_per_microbatch");
  }
  step.imbalance = MaxOverMean(RankCosts(step.slots));
  return Status::OK();
}

double TokenSteps::FixedRowsImbalance(const TokenStep& step) const {
  // Rows as the row plan packs them: padded rooms, at most max_documents_per_row each.
  std::vector<uint64_t> lengths(step.pieces.size());
  for (size_t i = 0; i < lengths.size(); ++i) {
    lengths[i] = PaddedLength(step.pieces[i].length, options_.pad_each_document_to);
  }
  std::vector<uint32_t> bin_of;
  const uint64_t bins =
      BestFitDecreasing(lengths, budget_, &bin_of, options_.max_documents_per_row);
  // Rows in the order of their first document in the window (a shuffled order, as the row plan
  // deals them), round robin.
  std::vector<uint64_t> first_item(bins, UINT64_MAX);
  std::vector<double> bin_cost(bins, 0.0);
  for (size_t i = 0; i < lengths.size(); ++i) {
    first_item[bin_of[i]] = std::min<uint64_t>(first_item[bin_of[i]], i);
    bin_cost[bin_of[i]] += cost_.Cost(lengths[i]);
  }
  std::vector<uint64_t> by_first(bins);
  for (uint64_t b = 0; b < bins; ++b) by_first[b] = b;
  std::sort(by_first.begin(), by_first.end(),
            [&](uint64_t x, uint64_t y) { return first_item[x] < first_item[y]; });
  std::vector<double> rank(options_.world_size, 0.0);
  for (uint64_t k = 0; k < bins; ++k) rank[k % rank.size()] += bin_cost[by_first[k]];
  return MaxOverMean(rank);
}

}  // namespace stoker::plan
