#include "stream/stream_token_steps.h"

#include <algorithm>
#include <cstdio>

#include "plan/document_padding.h"
#include "stream/row_count.h"
#include "stream/step_windows.h"

namespace stoker::stream {
namespace {

// A document of `length` tokens as the pieces a step places: at most `budget` tokens each.
void AppendTokenStepPieces(uint64_t length, uint64_t budget, std::vector<uint64_t>* out) {
  for (uint64_t off = 0; off < length; off += budget) {
    out->push_back(std::min(budget, length - off));
  }
}

std::string StepCostText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Result<std::shared_ptr<const StreamTokenSteps>> StreamTokenSteps::Create(
    std::shared_ptr<const StreamContext> ctx, const PlanOptions& options) {
  if (ctx == nullptr || ctx->scan == nullptr) {
    return InvalidArgument(
        "stream: tokens_per_step needs the pre-scan (every document's length, so that every "
        "rank knows every rank's steps): leave steps_per_epoch out");
  }
  if (options.tokens_per_step == 0) return InvalidArgument("tokens_per_step must be > 0");
  if (options.microbatches == 0 || options.microbatches >= 65536) {
    return InvalidArgument("microbatches must be in [1, 65535], got " +
                           std::to_string(options.microbatches));
  }
  STOKER_RETURN_IF_ERROR(plan::CheckTokenStepPadding(options));
  std::shared_ptr<StreamTokenSteps> s(new StreamTokenSteps());
  s->pad_ = std::max<uint64_t>(options.pad_each_document_to, 1);
  STOKER_ASSIGN_OR_RETURN(s->cost_, plan::StepCostModel(options));
  s->ctx_ = std::move(ctx);
  s->options_ = options;
  s->budget_ =
      options.max_tokens_per_microbatch > 0 ? options.max_tokens_per_microbatch : options.seq_len;
  if (s->budget_ == 0) return InvalidArgument("max_tokens_per_microbatch (or seq_len) must be > 0");
  const uint32_t w = std::max<uint32_t>(s->ctx_->config.world_size, 1);
  s->per_rank_ = (options.tokens_per_step + w - 1) / w;
  s->chat_ = s->ctx_->config.reader.chat != nullptr;
  // balance='attention' evens the ranks' step cost too (step_windows.h).
  s->by_cost_ = options.balance == BalanceMode::kAttention;
  s->options_text_ =
      "tokens_per_step=" + std::to_string(options.tokens_per_step) +
      " microbatches=" + std::to_string(options.microbatches) +
      " max_tokens_per_microbatch=" + std::to_string(s->budget_) +
      " balance=" + std::string(BalanceModeName(options.balance)) +
      " cost=" + StepCostText(s->cost_.a) + "," + StepCostText(s->cost_.b) + "," +
      StepCostText(s->cost_.c) + (s->by_cost_ ? " windows=cost" : "") +
      (s->pad_ > 1 ? " pad_each_document_to=" + std::to_string(s->pad_) : "") +
      (options.max_documents_per_row > 0
           ? " max_documents_per_row=" + std::to_string(options.max_documents_per_row)
           : "");
  return std::shared_ptr<const StreamTokenSteps>(std::move(s));
}

Result<plan::SlotAssignment> StreamTokenSteps::Assign(const std::vector<uint64_t>& lengths,
                                                      uint32_t microbatches) const {
  // Each piece takes its padded room (pad_each_document_to) in its microbatch, at most
  // max_documents_per_row pieces a microbatch, as on the indexed path (TokenSteps::Assign).
  std::vector<uint64_t> rooms(lengths.size());
  for (size_t i = 0; i < rooms.size(); ++i) rooms[i] = PaddedLength(lengths[i], pad_);
  return plan::AssignStepSlots(rooms, 1, budget_, cost_, options_.balance, microbatches,
                               options_.max_documents_per_row);
}

Result<StreamTokenSteps::EpochPlan> StreamTokenSteps::Replay(uint64_t epoch) const {
  const StreamConfig& c = ctx_->config;
  const uint32_t world = c.world_size;
  const std::vector<std::vector<ReadUnit>> dealt =
      DealEpoch(ctx_->shards, ctx_->scan.get(), c.seed, epoch, world, c.pack);
  // Every rank's draw order and full windows (the last, partial one is the epoch's remainder).
  std::vector<std::vector<uint64_t>> orders(world), targets(world);
  std::vector<std::vector<double>> doc_costs(world);
  for (uint32_t r = 0; r < world; ++r) {
    std::vector<uint32_t> stream, trained;
    for (const ReadUnit& u : dealt[r]) {
      AppendUnitLengths(*ctx_->scan, u, &stream);
      if (chat_) AppendUnitValues(ctx_->scan->trained, u, &trained);
    }
    if (chat_ && trained.size() != stream.size()) {
      return Internal("stream: the pre-scan has no trained-token counts for rank " +
                      std::to_string(r) + "'s chat documents");
    }
    const std::vector<uint64_t> drawn =
        DrawIndices(c, MixKey(c.seed, epoch, 0x10000 + r), {}, stream);
    std::vector<uint64_t> pieces;
    for (uint64_t i : drawn) {
      const uint64_t length = stream[i];
      orders[r].push_back(length);
      pieces.clear();
      AppendTokenStepPieces(length, budget_, &pieces);
      double cost = 0;
      for (uint64_t n : pieces) cost += cost_.Cost(PaddedLength(n, pad_));
      doc_costs[r].push_back(cost);
      // The document's targets, however a step cuts it (a piece ending inside it reads the next
      // token's label): text all but its last token, chat its loss mask's (from the pre-scan).
      targets[r].push_back(chat_ ? trained[i] : (length > 0 ? length - 1 : 0));
    }
  }
  const std::vector<std::vector<StepWindow>> windows =
      CutStepWindows(orders, doc_costs, per_rank_, by_cost_);
  const size_t steps = windows[0].size();
  EpochPlan plan;
  std::vector<uint64_t> lengths;
  std::vector<double> costs(world);
  for (size_t s = 0; s < steps; ++s) {
    // The fewest microbatches (>= options_.microbatches) every rank's window fits in.
    uint32_t m = static_cast<uint32_t>(options_.microbatches);
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t r = 0; r < world; ++r) {
        const StepWindow& w = windows[r][s];
        lengths.clear();
        for (size_t i = w.first; i < w.end; ++i) {
          AppendTokenStepPieces(orders[r][i], budget_, &lengths);
        }
        STOKER_ASSIGN_OR_RETURN(plan::SlotAssignment a, Assign(lengths, m));
        if (a.microbatches > m) {
          m = a.microbatches;
          changed = true;
        }
      }
      if (m >= 65536) {
        return InvalidArgument("tokens_per_step: a step needs " + std::to_string(m) +
                               " microbatches per rank (at most 65535): lower tokens_per_step or "
                               "raise max_tokens_per_microbatch");
      }
    }
    uint64_t tokens = 0, trained = 0;
    for (uint32_t r = 0; r < world; ++r) {
      const StepWindow& w = windows[r][s];
      tokens += w.tokens;
      for (size_t i = w.first; i < w.end; ++i) trained += targets[r][i];
      costs[r] = w.cost;
    }
    plan.microbatches.push_back(m);
    plan.global_tokens.push_back(tokens);
    plan.global_trained.push_back(trained);
    plan.imbalance.push_back(plan::MaxOverMean(costs));
    plan.own_tokens.push_back(windows[c.rank][s].tokens);
  }
  return plan;
}

Result<std::shared_ptr<const StreamTokenSteps::EpochPlan>> StreamTokenSteps::Epoch(
    uint64_t epoch) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = epochs_.find(epoch);
    if (it != epochs_.end()) return it->second;
  }
  STOKER_ASSIGN_OR_RETURN(EpochPlan plan, Replay(epoch));
  auto shared = std::make_shared<const EpochPlan>(std::move(plan));
  std::lock_guard<std::mutex> lock(mu_);
  epochs_[epoch] = shared;
  while (epochs_.size() > 4) epochs_.erase(epochs_.begin());
  return shared;
}

Result<StreamTokenSteps::Step> StreamTokenSteps::Next(RankStream* stream, uint64_t epoch,
                                                      uint64_t step) const {
  STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const EpochPlan> plan, Epoch(epoch));
  if (step >= plan->steps()) {
    return OutOfRange("stream: epoch " + std::to_string(epoch) + " has " +
                      std::to_string(plan->steps()) + " steps counted in tokens, not " +
                      std::to_string(step + 1));
  }
  std::vector<PackedPiece> pieces;
  std::vector<uint64_t> lengths;
  uint64_t tokens = 0;
  while (tokens < plan->own_tokens[step]) {
    STOKER_ASSIGN_OR_RETURN(PackedPiece doc, stream->NextDocument());
    const size_t before = lengths.size();
    AppendTokenStepPieces(doc.length, budget_, &lengths);
    uint64_t offset = doc.offset;
    for (size_t i = before; i < lengths.size(); ++i) {
      PackedPiece p = doc;
      p.offset = offset;
      p.length = lengths[i];
      offset += lengths[i];
      pieces.push_back(std::move(p));
    }
    tokens += doc.length;
  }
  const StreamConfig& c = ctx_->config;
  if (tokens != plan->own_tokens[step]) {
    return FailedPrecondition(
        "stream: rank " + std::to_string(c.rank) + " read " + std::to_string(tokens) +
        " tokens for step " + std::to_string(step) + " of epoch " + std::to_string(epoch) +
        " where the pre-scan has " + std::to_string(plan->own_tokens[step]) +
        ": an input changed after the pre-scan, or a shard was skipped (on_error='skip'); steps "
        "counted in tokens need the documents the pre-scan read (restart to scan again)");
  }
  const uint32_t m = plan->microbatches[step];
  STOKER_ASSIGN_OR_RETURN(plan::SlotAssignment a, Assign(lengths, m));
  if (a.microbatches != m) {
    return Internal("stream: rank " + std::to_string(c.rank) + "'s step " + std::to_string(step) +
                    " needs " + std::to_string(a.microbatches) +
                    " microbatches where the replay planned " + std::to_string(m));
  }
  Step out;
  out.microbatches.resize(m);
  StepFigures& f = out.figures;
  for (uint32_t k = 0; k < m; ++k) {
    for (uint32_t i : a.slots[k]) {
      out.microbatches[k].push_back(pieces[i]);
      f.step_tokens += lengths[i];
      f.step_sum_l2 += lengths[i] * lengths[i];
    }
  }
  f.global_tokens = plan->global_tokens[step];
  f.global_trained_known = true;
  f.global_trained_tokens = plan->global_trained[step];
  f.step_imbalance = plan->imbalance[step];
  f.step_budget = options_.tokens_per_step;  // a stream has no batch-size schedule
  f.microbatches = m;
  return out;
}

}  // namespace stoker::stream
